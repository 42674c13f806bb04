import { InitialSchema1764000000000 } from './1764000000000-initial-schema';
import { Execute1764100000000 } from './1764100000000-execute';
import { TurnProvenance1764200000000 } from './1764200000000-turn-provenance';
import { EventRetention1764300000000 } from './1764300000000-event-retention';
import { ExactIds1764400000000 } from './1764400000000-exact-ids';
import { FidChainTurnRequestMetadata1764500000000 } from './1764500000000-fid-chain-turn-request-metadata';
import { ServerToolsAudit1764650000000 } from './1764650000000-server-tools-audit';
import { TurnRevision1764700000000 } from './1764700000000-turn-revision';
import { SessionVisibilityIndex1764800000000 } from './1764800000000-session-visibility-index';
import { Webhooks1765000000000 } from './1765000000000-webhooks';
import { SessionForks1765000000001 } from './1765000000001-session-forks';
import { ScaleLists1765100000000 } from './1765100000000-scale-lists';
import { SessionSearch1765100000001 } from './1765100000001-session-search';
import { SessionCounts1765100000002 } from './1765100000002-session-counts';
import { EventIdsPerOrg1765200000000 } from './1765200000000-event-ids-per-org';
import { SessionSearchRows1765300000000 } from './1765300000000-session-search-rows';
import { ParticipantLists1765400000000 } from './1765400000000-participant-lists';

/** Every migration, oldest first. New ones are appended, never edited. */
export const migrations = [
  InitialSchema1764000000000,
  Execute1764100000000,
  TurnProvenance1764200000000,
  EventRetention1764300000000,
  ExactIds1764400000000,
  FidChainTurnRequestMetadata1764500000000,
  ServerToolsAudit1764650000000,
  TurnRevision1764700000000,
  SessionVisibilityIndex1764800000000,
  Webhooks1765000000000,
  SessionForks1765000000001,
  ScaleLists1765100000000,
  SessionSearch1765100000001,
  SessionCounts1765100000002,
  EventIdsPerOrg1765200000000,
  SessionSearchRows1765300000000,
  ParticipantLists1765400000000,
];
