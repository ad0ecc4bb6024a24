import type { Locale } from "./i18n";

/** The signed-in account as GET /v1/me answers it: what the shell and the account and organization pages show. */
export interface Me {
  id: string;
  email: string;
  display_name: string | null;
  locale: Locale;
}
