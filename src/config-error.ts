/** A variable that does not parse: the process stops with this message, which names the variable. */
export class ConfigError extends Error {}
