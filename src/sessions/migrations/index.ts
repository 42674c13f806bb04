import { InitialSchema1764000000000 } from './1764000000000-initial-schema';
import { Execute1764100000000 } from './1764100000000-execute';

/** Every migration, oldest first. New ones are appended, never edited. */
export const migrations = [InitialSchema1764000000000, Execute1764100000000];
