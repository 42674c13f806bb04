export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** A date-time string at UTC, such as 2007-12-03T10:15:30Z, compliant with the `date-time` format outlined in section 5.6 of the RFC 3339 profile of the ISO 8601 standard for representation of dates and times using the Gregorian calendar.This scalar is serialized to a string in ISO 8601 format and parsed from a string in ISO 8601 format. */
  DateTimeISO: { input: string; output: string; }
  /** The `JSON` scalar type represents JSON values as specified by [ECMA-404](http://www.ecma-international.org/publications/files/ECMA-ST/ECMA-404.pdf). */
  JSON: { input: unknown; output: unknown; }
};

export type ActiveFileInput = {
  /** Full current content. Omit to say 'unchanged since last turn' together with contentHash. */
  content?: InputMaybe<Scalars['String']['input']>;
  contentHash?: InputMaybe<Scalars['String']['input']>;
  isTouched?: InputMaybe<Scalars['Boolean']['input']>;
  path: Scalars['String']['input'];
  /** Size in bytes (UTF-8). With contentHash and no content, a file over 100 KB is recorded as skipped and never uploaded. */
  sizeBytes?: InputMaybe<Scalars['Int']['input']>;
};

/** Which vector collection and LLM environment a session uses. */
export type AgentContext = Node & {
  __typename?: 'AgentContext';
  defaultModel: Scalars['String']['output'];
  description?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  vectorCollection: Scalars['String']['output'];
};

export type AgentContextInput = {
  defaultModel: Scalars['String']['input'];
  description?: InputMaybe<Scalars['String']['input']>;
  id?: InputMaybe<Scalars['ID']['input']>;
  name: Scalars['String']['input'];
  vectorCollection: Scalars['String']['input'];
};

/** Returned by executeAsync: the turn exists and is PENDING; follow it with subscriptions. */
export type AgentExecuteAccepted = {
  __typename?: 'AgentExecuteAccepted';
  sequenceNumber: Scalars['Int']['output'];
  sessionId: Scalars['ID']['output'];
  turnId: Scalars['ID']['output'];
};

export type AgentExecuteInput = {
  activeFiles?: InputMaybe<Array<ActiveFileInput>>;
  agentContextId: Scalars['ID']['input'];
  clientKind?: InputMaybe<ClientKind>;
  conversationContextId?: InputMaybe<Scalars['ID']['input']>;
  /** A retried call with the same key returns the first call's result and creates no second turn. */
  idempotencyKey?: InputMaybe<Scalars['String']['input']>;
  instruction?: InputMaybe<Scalars['String']['input']>;
  language?: InputMaybe<Scalars['String']['input']>;
  mode?: InputMaybe<Scalars['String']['input']>;
  repo?: InputMaybe<Scalars['String']['input']>;
  /** Restricts retrieval to these workspace path prefixes (whole segments), e.g. ["ui/primitives"]. Request-only: stored with the turn, never in the vector store. */
  retrievalPathPrefixes?: InputMaybe<Array<Scalars['String']['input']>>;
  /** Omit to start a new session. */
  sessionId?: InputMaybe<Scalars['ID']['input']>;
  sessionName?: InputMaybe<Scalars['String']['input']>;
  toolResults?: InputMaybe<Array<ToolResultInput>>;
  /** AGN-033 follow-on rule. With toolResults: the PENDING turn that asked for them. With an instruction: the session's latest finished turn, which the new turn follows (TURN_NOT_LATEST otherwise). */
  turnId?: InputMaybe<Scalars['ID']['input']>;
  workspaceId?: InputMaybe<Scalars['String']['input']>;
};

export type AgentExecuteKind =
  | 'CLIENT_TOOL_CONTINUATION'
  | 'FINAL';

export type AgentExecuteResponse = AgentFinalResponse | AgentToolContinuation;

/** Kind FINAL. Buckets forbidden for this kind do not exist on the type (AGN-033 3.4). */
export type AgentFinalResponse = {
  __typename?: 'AgentFinalResponse';
  files?: Maybe<Array<FileRef>>;
  kind: AgentExecuteKind;
  modeDisplayName: Scalars['String']['output'];
  primaryOutputText: Scalars['String']['output'];
  sessionId: Scalars['ID']['output'];
  toolResults?: Maybe<Array<ToolResult>>;
  turnId: Scalars['ID']['output'];
  usage?: Maybe<TurnUsage>;
  userWarnings?: Maybe<Array<Scalars['String']['output']>>;
};

export type AgentSession = Node & {
  __typename?: 'AgentSession';
  agentContext?: Maybe<AgentContext>;
  agentContextId: Scalars['ID']['output'];
  agentContextName?: Maybe<Scalars['String']['output']>;
  category?: Maybe<Scalars['String']['output']>;
  conversationContext?: Maybe<ConversationContext>;
  conversationContextId?: Maybe<Scalars['ID']['output']>;
  conversationContextName?: Maybe<Scalars['String']['output']>;
  creationDate: Scalars['DateTimeISO']['output'];
  defaultLanguage?: Maybe<Scalars['String']['output']>;
  description?: Maybe<Scalars['String']['output']>;
  /** The session and turn this session was forked at; null unless it is a fork. */
  forkedFrom?: Maybe<SessionForkOrigin>;
  /** Sessions forked from this one that the caller may read, newest first. */
  forks: AgentSessionSummaryConnection;
  id: Scalars['ID']['output'];
  /** A fork's copied turns' usage, charged to the turns they copy (not part of `usage`, which sums the turns run in this session); null unless it is a fork. */
  inheritedUsage?: Maybe<TurnUsage>;
  isDeleted: Scalars['Boolean']['output'];
  isDraft: Scalars['Boolean']['output'];
  isPublic: Scalars['Boolean']['output'];
  key?: Maybe<Scalars['String']['output']>;
  lastTurn?: Maybe<AgentSessionTurn>;
  lastUpdatedDate: Scalars['DateTimeISO']['output'];
  name: Scalars['String']['output'];
  ownerOrganization: EntityHeader;
  ownerUser: EntityHeader;
  /** Owner plus every user who created a turn in the session. */
  participants: Array<EntityHeader>;
  repo?: Maybe<Scalars['String']['output']>;
  summary: AgentSessionSummary;
  turnCount: Scalars['Int']['output'];
  /** Ordered by sequenceNumber ascending. Forward pagination. */
  turns: AgentSessionTurnConnection;
  /** Sum over the turns run in this session (a fork's copied turns are in inheritedUsage instead). */
  usage: TurnUsage;
  workspaceId?: Maybe<Scalars['String']['output']>;
};


export type AgentSessionForksArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type AgentSessionTurnsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  status?: InputMaybe<AgentSessionTurnStatus>;
};

export type AgentSessionActiveFileRef = {
  __typename?: 'AgentSessionActiveFileRef';
  contentHash: Scalars['String']['output'];
  isTouched: Scalars['Boolean']['output'];
  path: Scalars['String']['output'];
  sizeBytes: Scalars['Int']['output'];
  wasSentToLLM: Scalars['Boolean']['output'];
  wasTooLargeToSend: Scalars['Boolean']['output'];
};

export type AgentSessionChunkRef = {
  __typename?: 'AgentSessionChunkRef';
  chunkId: Scalars['ID']['output'];
  /** SHA-256 of the chunk text. */
  contentHash: Scalars['String']['output'];
  endLine: Scalars['Int']['output'];
  /** SHA-256 of the whole file the chunk was cut from, when the index recorded it (see turnsUsingFile). */
  fileContentHash?: Maybe<Scalars['String']['output']>;
  path: Scalars['String']['output'];
  score?: Maybe<Scalars['Float']['output']>;
  startLine: Scalars['Int']['output'];
};

export type AgentSessionFilter = {
  agentContextId?: InputMaybe<Scalars['ID']['input']>;
  conversationContextId?: InputMaybe<Scalars['ID']['input']>;
  /** Admins only; others get FORBIDDEN. */
  includeDeleted?: InputMaybe<Scalars['Boolean']['input']>;
  lastTurnStatus?: InputMaybe<AgentSessionTurnStatus>;
  ownerUserId?: InputMaybe<Scalars['ID']['input']>;
  /** Sessions owned by this user OR in which this user created any turn (spec DD-003). */
  participantId?: InputMaybe<Scalars['ID']['input']>;
  repo?: InputMaybe<Scalars['String']['input']>;
  /** Case-insensitive substring of the session name. */
  search?: InputMaybe<Scalars['String']['input']>;
  updatedAfter?: InputMaybe<Scalars['DateTimeISO']['input']>;
  updatedBefore?: InputMaybe<Scalars['DateTimeISO']['input']>;
  workspaceId?: InputMaybe<Scalars['String']['input']>;
};

export type AgentSessionOrder =
  | 'CREATED_DESC'
  | 'LAST_UPDATED_ASC'
  | 'LAST_UPDATED_DESC'
  | 'NAME_ASC';

export type AgentSessionPatch = {
  category?: InputMaybe<Scalars['String']['input']>;
  description?: InputMaybe<Scalars['String']['input']>;
  isPublic?: InputMaybe<Scalars['Boolean']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
};

/** A retrieved snippet recorded on the turn but not sent to the model. */
export type AgentSessionSkippedSnippet = {
  __typename?: 'AgentSessionSkippedSnippet';
  chunkId: Scalars['ID']['output'];
  contentHash: Scalars['String']['output'];
  endLine: Scalars['Int']['output'];
  path: Scalars['String']['output'];
  reason: SkippedSnippetReason;
  startLine: Scalars['Int']['output'];
};

/** List-view projection of a session (spec DD-003 / DD-007). */
export type AgentSessionSummary = {
  __typename?: 'AgentSessionSummary';
  agentContext?: Maybe<AgentContext>;
  agentContextId: Scalars['ID']['output'];
  agentContextName?: Maybe<Scalars['String']['output']>;
  category?: Maybe<Scalars['String']['output']>;
  conversationContext?: Maybe<ConversationContext>;
  conversationContextId?: Maybe<Scalars['ID']['output']>;
  conversationContextName?: Maybe<Scalars['String']['output']>;
  description?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  isPublic: Scalars['Boolean']['output'];
  key?: Maybe<Scalars['String']['output']>;
  lastTurn?: Maybe<AgentSessionTurn>;
  lastTurnDate?: Maybe<Scalars['DateTimeISO']['output']>;
  lastTurnStatus?: Maybe<AgentSessionTurnStatus>;
  lastUpdatedDate: Scalars['DateTimeISO']['output'];
  name: Scalars['String']['output'];
  ownerUser: EntityHeader;
  /** Owner plus every user who created a turn in the session. */
  participants: Array<EntityHeader>;
  turnCount: Scalars['Int']['output'];
};

export type AgentSessionSummaryConnection = {
  __typename?: 'AgentSessionSummaryConnection';
  edges: Array<AgentSessionSummaryEdge>;
  pageInfo: PageInfo;
  totalCount: Scalars['Int']['output'];
  /** True when totalCount stopped at its cap (10,000; 100 for a search) and more sessions match: it is a lower bound (show "10,000+"). */
  totalCountIsLowerBound: Scalars['Boolean']['output'];
};

export type AgentSessionSummaryEdge = {
  __typename?: 'AgentSessionSummaryEdge';
  cursor: Scalars['String']['output'];
  node: AgentSessionSummary;
};

export type AgentSessionTurn = Node & {
  __typename?: 'AgentSessionTurn';
  activeFileRefs: Array<AgentSessionActiveFileRef>;
  agentAnswerSummary?: Maybe<Scalars['String']['output']>;
  /** The model the provider says answered (a dated snapshot name), next to the requested openAIModel. */
  answeredByModel?: Maybe<Scalars['String']['output']>;
  chunkRefs: Array<AgentSessionChunkRef>;
  conversationId?: Maybe<Scalars['String']['output']>;
  createdByUser: EntityHeader;
  creationDate: Scalars['DateTimeISO']['output'];
  errors: Array<Scalars['String']['output']>;
  /** Files the turn's server tools wrote (write_file); the same FileRefs as the final response's files. */
  files: Array<FileRef>;
  fullAgentAnswerUrl?: Maybe<Scalars['String']['output']>;
  fullInstructionUrl?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  /** For a turn a fork copied: the session and turn it is a copy of (its usage was charged there). Null for a turn run in this session. */
  inheritedFrom?: Maybe<SessionForkOrigin>;
  instructionSummary: Scalars['String']['output'];
  mode: Scalars['String']['output'];
  openAIChainExpiresDate?: Maybe<Scalars['DateTimeISO']['output']>;
  /** Why this turn's provider conversation started afresh; null when it continued the session's chain. */
  openAIChainRestartReason?: Maybe<OpenAiChainRestartReason>;
  openAIModel?: Maybe<Scalars['String']['output']>;
  openAIRequestPayloadUrl?: Maybe<Scalars['String']['output']>;
  openAIResponseId?: Maybe<Scalars['String']['output']>;
  openAIResponsePayloadUrl?: Maybe<Scalars['String']['output']>;
  openAIResponseReceivedDate?: Maybe<Scalars['DateTimeISO']['output']>;
  /** Client tool calls this PENDING turn is waiting on (AGN-033 continuation); empty otherwise. */
  pendingToolCalls: Array<ToolCall>;
  previousOpenAIResponseId?: Maybe<Scalars['String']['output']>;
  /** Path prefixes retrieval was restricted to (request-only scope); null when it searched everything. */
  retrievalPathPrefixes?: Maybe<Array<Scalars['String']['output']>>;
  sequenceNumber: Scalars['Int']['output'];
  session: AgentSession;
  sessionId: Scalars['ID']['output'];
  /** Retrieved snippets recorded but not sent to the model, and why. */
  skippedSnippets: Array<AgentSessionSkippedSnippet>;
  status: AgentSessionTurnStatus;
  statusTimeStamp: Scalars['DateTimeISO']['output'];
  /** Every tool call of the turn, server or client, in the order the model made them; kept after the turn ends. */
  toolCalls: Array<ToolCallRecord>;
  usage?: Maybe<TurnUsage>;
  warnings: Array<Scalars['String']['output']>;
};

export type AgentSessionTurnConnection = {
  __typename?: 'AgentSessionTurnConnection';
  edges: Array<AgentSessionTurnEdge>;
  pageInfo: PageInfo;
  totalCount: Scalars['Int']['output'];
};

export type AgentSessionTurnEdge = {
  __typename?: 'AgentSessionTurnEdge';
  cursor: Scalars['String']['output'];
  node: AgentSessionTurn;
};

export type AgentSessionTurnStatus =
  | 'CANCELLED'
  | 'COMPLETED'
  | 'FAILED'
  | 'PENDING';

/** Kind CLIENT_TOOL_CONTINUATION: the client must run toolCalls and send back exactly matching toolResults. */
export type AgentToolContinuation = {
  __typename?: 'AgentToolContinuation';
  kind: AgentExecuteKind;
  modeDisplayName: Scalars['String']['output'];
  sessionId: Scalars['ID']['output'];
  toolCalls: Array<ToolCall>;
  toolContinuationMessage?: Maybe<Scalars['String']['output']>;
  turnId: Scalars['ID']['output'];
};

export type ClientKind =
  | 'BROWSER'
  | 'CLI'
  | 'THICK_CLIENT';

/** System prompt, model, temperature and client tools of a conversation. */
export type ConversationContext = Node & {
  __typename?: 'ConversationContext';
  description?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  model?: Maybe<Scalars['String']['output']>;
  name: Scalars['String']['output'];
  systemPrompt: Scalars['String']['output'];
  temperature?: Maybe<Scalars['Float']['output']>;
  /** Tools the CLIENT executes (AGN-033 continuation). The server may add built-in server tools. */
  tools: Array<ToolDefinition>;
};

export type ConversationContextInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  id?: InputMaybe<Scalars['ID']['input']>;
  model?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  systemPrompt: Scalars['String']['input'];
  temperature?: InputMaybe<Scalars['Float']['input']>;
  tools?: InputMaybe<Array<ToolDefinitionInput>>;
};

/** A reference to another entity: its id and a display text (spec: EntityHeader). */
export type EntityHeader = {
  __typename?: 'EntityHeader';
  id: Scalars['ID']['output'];
  text: Scalars['String']['output'];
};

export type FileRef = {
  __typename?: 'FileRef';
  contentExpires?: Maybe<Scalars['DateTimeISO']['output']>;
  contentHash: Scalars['String']['output'];
  description?: Maybe<Scalars['String']['output']>;
  mimeType: Scalars['String']['output'];
  name: Scalars['String']['output'];
  sizeBytes: Scalars['Int']['output'];
  url: Scalars['String']['output'];
};

export type Mutation = {
  __typename?: 'Mutation';
  /** Stops a PENDING turn; it becomes CANCELLED. Idempotent on a CANCELLED turn. */
  cancelTurn: AgentSessionTurn;
  /** The secret is shown in this answer only. */
  createWebhookEndpoint: WebhookEndpointWithSecret;
  /** Soft delete (isDeleted = true). */
  deleteAgentSession: Scalars['Boolean']['output'];
  deleteWebhookEndpoint: Scalars['ID']['output'];
  /** Runs the orchestrator and waits for the turn's outcome. */
  execute: AgentExecuteResponse;
  /** Creates the PENDING turn and returns at once; the orchestrator runs in the background. */
  executeAsync: AgentExecuteAccepted;
  /** A new session of the caller's holding copies of the session's turns up to and including turnId (a finished turn), with their summaries, payload URLs and usage (inherited: not counted again). Its next execute continues turnId's provider conversation, or preloads a new one from the copies. Only readers of the session may fork it; the caller is the fork's only participant. */
  forkAgentSession: AgentSession;
  /** Sends a delivery again now, with the same webhook-id and a new retry window. */
  redeliverWebhook: WebhookDelivery;
  /** Spec DD-006: a NEW turn with the same (or a new) instruction and fresh retrieval; the old turn is untouched. */
  rerunTurn: AgentExecuteResponse;
  /** A new secret; the previous one keeps signing beside it for 24 hours. */
  rotateWebhookSecret: WebhookEndpointWithSecret;
  updateAgentSession: AgentSession;
  updateWebhookEndpoint: WebhookEndpoint;
  /** Admin only. */
  upsertAgentContext: AgentContext;
  /** Admin only. */
  upsertConversationContext: ConversationContext;
};


export type MutationCancelTurnArgs = {
  sessionId: Scalars['ID']['input'];
  turnId: Scalars['ID']['input'];
};


export type MutationCreateWebhookEndpointArgs = {
  input: WebhookEndpointInput;
};


export type MutationDeleteAgentSessionArgs = {
  id: Scalars['ID']['input'];
};


export type MutationDeleteWebhookEndpointArgs = {
  id: Scalars['ID']['input'];
};


export type MutationExecuteArgs = {
  input: AgentExecuteInput;
};


export type MutationExecuteAsyncArgs = {
  input: AgentExecuteInput;
};


export type MutationForkAgentSessionArgs = {
  name?: InputMaybe<Scalars['String']['input']>;
  sessionId: Scalars['ID']['input'];
  turnId: Scalars['ID']['input'];
};


export type MutationRedeliverWebhookArgs = {
  deliveryId: Scalars['ID']['input'];
};


export type MutationRerunTurnArgs = {
  activeFiles?: InputMaybe<Array<ActiveFileInput>>;
  instruction?: InputMaybe<Scalars['String']['input']>;
  retrievalPathPrefixes?: InputMaybe<Array<Scalars['String']['input']>>;
  sessionId: Scalars['ID']['input'];
  turnId: Scalars['ID']['input'];
};


export type MutationRotateWebhookSecretArgs = {
  id: Scalars['ID']['input'];
};


export type MutationUpdateAgentSessionArgs = {
  id: Scalars['ID']['input'];
  patch: AgentSessionPatch;
};


export type MutationUpdateWebhookEndpointArgs = {
  enabled?: InputMaybe<Scalars['Boolean']['input']>;
  id: Scalars['ID']['input'];
  input: WebhookEndpointInput;
};


export type MutationUpsertAgentContextArgs = {
  input: AgentContextInput;
};


export type MutationUpsertConversationContextArgs = {
  input: ConversationContextInput;
};

/** An object with a global id: `node(id:)` fetches it again. */
export type Node = {
  id: Scalars['ID']['output'];
};

/** Why a turn's provider conversation started afresh instead of continuing the session's last one. */
export type OpenAiChainRestartReason =
  /** The last completed response was older than OPENAI_CHAIN_TTL_SECONDS. */
  | 'EXPIRED'
  /** The first turn of the session. */
  | 'FIRST_TURN'
  /** The provider no longer knew the previous response; the turn retried on a new, preloaded chain. */
  | 'LOST_BY_PROVIDER'
  /** No earlier turn completed with a provider response. */
  | 'NO_USABLE_PREVIOUS_RESPONSE';

export type PageInfo = {
  __typename?: 'PageInfo';
  endCursor?: Maybe<Scalars['String']['output']>;
  hasNextPage: Scalars['Boolean']['output'];
  /** Lists that page only forward (first/after) may answer false. */
  hasPreviousPage: Scalars['Boolean']['output'];
  startCursor?: Maybe<Scalars['String']['output']>;
};

export type Query = {
  __typename?: 'Query';
  agentContexts: Array<AgentContext>;
  agentSession?: Maybe<AgentSession>;
  /** TurnId is only valid inside its session (AGN-033 3.1). */
  agentSessionTurn?: Maybe<AgentSessionTurn>;
  agentSessions: AgentSessionSummaryConnection;
  /** Spec DD-003 GetAgentSessionsForUserAsync: owner or participant. */
  agentSessionsForUser: AgentSessionSummaryConnection;
  conversationContexts: Array<ConversationContext>;
  lastAgentSessionTurn?: Maybe<AgentSessionTurn>;
  /** The newest status-event id handed out so far in the caller's org (ids are per org). Read it before loading a list, then subscribe with it as afterEventId: nothing that changes after this query is missed. */
  latestEventId: Scalars['ID']['output'];
  me: Viewer;
  /** The object with this id, or null when there is none the caller may see. */
  node?: Maybe<Node>;
  /** The objects with these ids, in their order; null where there is none the caller may see. At most 100 ids. */
  nodes: Array<Maybe<Node>>;
  /** Turns whose retrieval returned this chunk (a vector point id), newest first. */
  turnsUsingChunk: AgentSessionTurnConnection;
  /** Turns that used the file version with this SHA-256: as an active file, or through a retrieved chunk cut from it. Newest first. */
  turnsUsingFile: AgentSessionTurnConnection;
  /** Turns per day by status and their estimated cost over the last `days` days (1-366, today included, UTC): the organisation's for admins, the caller's own turns for everyone else. */
  usageByDay: UsageByDay;
  /** An endpoint's deliveries, newest first. */
  webhookDeliveries: WebhookDeliveryConnection;
  webhookEndpoints: Array<WebhookEndpoint>;
};


export type QueryAgentSessionArgs = {
  id: Scalars['ID']['input'];
};


export type QueryAgentSessionTurnArgs = {
  sessionId: Scalars['ID']['input'];
  turnId: Scalars['ID']['input'];
};


export type QueryAgentSessionsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<AgentSessionFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: InputMaybe<AgentSessionOrder>;
};


export type QueryAgentSessionsForUserArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  userId: Scalars['ID']['input'];
};


export type QueryLastAgentSessionTurnArgs = {
  sessionId: Scalars['ID']['input'];
};


export type QueryNodeArgs = {
  id: Scalars['ID']['input'];
};


export type QueryNodesArgs = {
  ids: Array<Scalars['ID']['input']>;
};


export type QueryTurnsUsingChunkArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  chunkId: Scalars['ID']['input'];
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryTurnsUsingFileArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  contentHash: Scalars['String']['input'];
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryUsageByDayArgs = {
  days?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryWebhookDeliveriesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  endpointId: Scalars['ID']['input'];
  first?: InputMaybe<Scalars['Int']['input']>;
};

/** The session and turn a session was forked at. */
export type SessionForkOrigin = {
  __typename?: 'SessionForkOrigin';
  /** Null when the caller may not read it (any more). */
  session?: Maybe<AgentSession>;
  /** Null when the caller may not read it (any more). */
  turn?: Maybe<AgentSessionTurn>;
};

export type SkippedSnippetReason =
  /** The snippet's file is an active file of the live chain; the developer's local version wins over the index. */
  | 'ACTIVE_FILE_IS_CURRENT';

export type Subscription = {
  __typename?: 'Subscription';
  /** Org-wide feed for dashboards (admins see the org; others see only sessions they may read). */
  sessionActivity: TurnStatusChangedEvent;
  /**
   * Answer text as the LLM streams it; the stream completes when the turn leaves PENDING.
   * A subscriber that joins late first receives the text already produced (from index 0).
   */
  turnOutput: TurnOutputDelta;
  /** Every status change of every turn of one session the caller may read. */
  turnStatusChanged: TurnStatusChangedEvent;
};


export type SubscriptionSessionActivityArgs = {
  afterEventId?: InputMaybe<Scalars['ID']['input']>;
  filter?: InputMaybe<AgentSessionFilter>;
};


export type SubscriptionTurnOutputArgs = {
  sessionId: Scalars['ID']['input'];
  turnId: Scalars['ID']['input'];
};


export type SubscriptionTurnStatusChangedArgs = {
  afterEventId?: InputMaybe<Scalars['ID']['input']>;
  sessionId: Scalars['ID']['input'];
};

export type ToolCall = {
  __typename?: 'ToolCall';
  /** argumentsJson parsed; null when it is not valid JSON. */
  arguments?: Maybe<Scalars['JSON']['output']>;
  argumentsJson: Scalars['String']['output'];
  name: Scalars['String']['output'];
  toolCallId: Scalars['ID']['output'];
};

export type ToolCallOrigin =
  /** A conversation tool the client ran (AGN-033 continuation). */
  | 'CLIENT'
  /** A built-in tool the gateway ran itself (write_file, search_code). */
  | 'SERVER';

/** One tool call of a turn and its result (spec 004 section 7 audit trail). */
export type ToolCallRecord = {
  __typename?: 'ToolCallRecord';
  /** The arguments the model sent, at most 4,096 characters (all of them are in the raw response payload). */
  argumentsJson: Scalars['String']['output'];
  /** Measured by the gateway for server tools, reported by the client for client tools. */
  executionMs?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  origin: ToolCallOrigin;
  /** The result or error the model received, at most 1,024 characters; null until there is one. */
  resultSummary?: Maybe<Scalars['String']['output']>;
  status: ToolCallStatus;
};

export type ToolCallStatus =
  /** The turn ended before the call had a result. */
  | 'ABANDONED'
  | 'COMPLETED'
  /** The tool ran and reported an error (bad arguments included); the model received the error. */
  | 'FAILED'
  | 'RUNNING'
  | 'WAITING_FOR_CLIENT';

export type ToolDefinition = {
  __typename?: 'ToolDefinition';
  description?: Maybe<Scalars['String']['output']>;
  name: Scalars['String']['output'];
  /** JSON Schema of the arguments, as a JSON string. */
  parametersJson: Scalars['String']['output'];
};

export type ToolDefinitionInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  parametersJson: Scalars['String']['input'];
};

export type ToolResult = {
  __typename?: 'ToolResult';
  errorMessage?: Maybe<Scalars['String']['output']>;
  executionMs: Scalars['Int']['output'];
  resultJson?: Maybe<Scalars['String']['output']>;
  toolCallId: Scalars['ID']['output'];
};

export type ToolResultInput = {
  errorMessage?: InputMaybe<Scalars['String']['input']>;
  executionMs: Scalars['Int']['input'];
  resultJson?: InputMaybe<Scalars['String']['input']>;
  toolCallId: Scalars['ID']['input'];
};

export type TurnOutputDelta = {
  __typename?: 'TurnOutputDelta';
  /** 0-based, gap-free per turn, so a client can detect loss. */
  index: Scalars['Int']['output'];
  sessionId: Scalars['ID']['output'];
  /** A piece of answer text; empty on a tool call item. */
  textDelta: Scalars['String']['output'];
  /** Set on tool call items: a tool call as it starts (RUNNING, WAITING_FOR_CLIENT) and as it ends (spec 004 section 7). */
  toolCall?: Maybe<ToolCallRecord>;
  turnId: Scalars['ID']['output'];
};

export type TurnStatusChangedEvent = {
  __typename?: 'TurnStatusChangedEvent';
  createdByUser: EntityHeader;
  /** Durable, strictly increasing within the org (each org has its own sequence); pass it back as afterEventId to resume. */
  eventId: Scalars['ID']['output'];
  previousStatus?: Maybe<AgentSessionTurnStatus>;
  sequenceNumber: Scalars['Int']['output'];
  session: AgentSessionSummary;
  sessionId: Scalars['ID']['output'];
  status: AgentSessionTurnStatus;
  statusTimeStamp: Scalars['DateTimeISO']['output'];
  /** The turn as it is when the event is delivered (DataLoader-batched). On an event replayed from afterEventId that can be later than the change: status, previousStatus and statusTimeStamp are the change itself, as stored when it happened. */
  turn: AgentSessionTurn;
  turnId: Scalars['ID']['output'];
};

export type TurnUsage = {
  __typename?: 'TurnUsage';
  /** Input tokens the provider served from its prompt cache (part of inputTokens), priced at the cached rate. */
  cachedInputTokens: Scalars['Int']['output'];
  estimatedCostUsd?: Maybe<Scalars['Float']['output']>;
  inputTokens: Scalars['Int']['output'];
  /** True when the provider reported no token counts (for a session: for some turn) and they were estimated as ceil(characters / 4). */
  isEstimated: Scalars['Boolean']['output'];
  outputTokens: Scalars['Int']['output'];
  totalTokens: Scalars['Int']['output'];
};

export type UsageByDay = {
  __typename?: 'UsageByDay';
  /** Oldest first, one per day of the window, days without turns included. */
  days: Array<UsageDay>;
  scope: UsageScope;
};

/** Turns created on one UTC calendar day, by their current status, and their estimated cost. */
export type UsageDay = {
  __typename?: 'UsageDay';
  cancelledTurns: Scalars['Int']['output'];
  completedTurns: Scalars['Int']['output'];
  /** YYYY-MM-DD (UTC). */
  date: Scalars['String']['output'];
  /** Sum of the estimates of the turns that have one. */
  estimatedCostUsd: Scalars['Float']['output'];
  failedTurns: Scalars['Int']['output'];
  pendingTurns: Scalars['Int']['output'];
};

export type UsageScope =
  /** The turns the caller created. */
  | 'CALLER'
  /** Every turn of the caller's organisation (admins). */
  | 'ORGANIZATION';

export type Viewer = {
  __typename?: 'Viewer';
  organization: EntityHeader;
  roles: Array<Scalars['String']['output']>;
  user: EntityHeader;
};

export type WebhookAttempt = {
  __typename?: 'WebhookAttempt';
  at: Scalars['DateTimeISO']['output'];
  durationMs: Scalars['Int']['output'];
  error?: Maybe<Scalars['String']['output']>;
  /** The receiver's HTTP status; null when none arrived (timeout, connection error, refused address). */
  statusCode?: Maybe<Scalars['Int']['output']>;
};

export type WebhookDelivery = Node & {
  __typename?: 'WebhookDelivery';
  /** Oldest first (the newest 50). */
  attempts: Array<WebhookAttempt>;
  createdAt: Scalars['DateTimeISO']['output'];
  eventType: WebhookEventType;
  id: Scalars['ID']['output'];
  nextAttemptAt?: Maybe<Scalars['DateTimeISO']['output']>;
  sessionId?: Maybe<Scalars['ID']['output']>;
  status: WebhookDeliveryStatus;
  turnId?: Maybe<Scalars['ID']['output']>;
  /** The webhook-id header: the same on every attempt at this event. */
  webhookId: Scalars['String']['output'];
};

export type WebhookDeliveryConnection = {
  __typename?: 'WebhookDeliveryConnection';
  edges: Array<WebhookDeliveryEdge>;
  pageInfo: PageInfo;
};

export type WebhookDeliveryEdge = {
  __typename?: 'WebhookDeliveryEdge';
  cursor: Scalars['String']['output'];
  node: WebhookDelivery;
};

export type WebhookDeliveryStatus =
  /** No attempt is made again (last retry spent, a 4xx, a refused address, or 410 Gone); redeliverWebhook sends it again. */
  | 'FAILED'
  /** Not delivered yet; attempted again at nextAttemptAt. */
  | 'PENDING'
  /** The receiver answered 2xx. */
  | 'SUCCEEDED';

/** A receiver of the organisation's webhooks (Standard Webhooks). */
export type WebhookEndpoint = Node & {
  __typename?: 'WebhookEndpoint';
  createdAt: Scalars['DateTimeISO']['output'];
  description?: Maybe<Scalars['String']['output']>;
  /** Why the gateway disabled it (the receiver answered 410 Gone); null otherwise. */
  disabledReason?: Maybe<Scalars['String']['output']>;
  enabled: Scalars['Boolean']['output'];
  events: Array<WebhookEventType>;
  id: Scalars['ID']['output'];
  url: Scalars['String']['output'];
};

export type WebhookEndpointInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  events: Array<WebhookEventType>;
  /** https:// (http:// for localhost outside production). */
  url: Scalars['String']['input'];
};

export type WebhookEndpointWithSecret = {
  __typename?: 'WebhookEndpointWithSecret';
  endpoint: WebhookEndpoint;
  /** The signing secret (whsec_…), shown only here: store it now. */
  secret: Scalars['String']['output'];
};

export type WebhookEventType =
  /** A session was created (by an execute, or by forkAgentSession). */
  | 'SESSION_CREATED'
  /** A turn waits for the results of client tools (AGN-033 continuation). */
  | 'TURN_AWAITING_TOOL_RESULTS'
  /** A turn was cancelled. */
  | 'TURN_CANCELLED'
  /** A turn completed. */
  | 'TURN_COMPLETED'
  /** A turn failed. */
  | 'TURN_FAILED';
