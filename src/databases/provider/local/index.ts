export { LocalDatabaseProvider, type LocalProviderOptions } from "./provider.js";
export { SIZE_PROFILES } from "./settings.js";
export { ALLOWED_EXTENSIONS, DEFAULT_EXTENSIONS } from "./extensions.js";
export { normalizeCidr, normalizeCidrs } from "./hba.js";
export { generatePassword } from "./record.js";
export { findPgbouncer } from "./pool.js";
