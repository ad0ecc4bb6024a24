/**
 * What other areas may use of accounts without reading its tables: the service (the console's sign-in, the
 * operator's accounts, the edge's visitor sign-in), the password rule, and the reads billing and linked apps need.
 */
export {
  accountsService,
  spendCapsOf,
  isLiveAccount,
  liveAccountByEmail,
  signsInWithSuite,
  MIN_PASSWORD_LENGTH,
  type AccountsService,
} from "./service.js";
