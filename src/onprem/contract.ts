/** What the on-premises area provides the others (capability "editionLicense", read by /v1/edition). */

declare module "../kernel/capabilities.js" {
  interface Capabilities {
    /** the installation's verified license (EDITION=onprem with LICENSE_FILE), computed at each call */
    editionLicense: () => EditionLicense;
  }
}

/**
 * The installation's own license (on-premises edition, LICENSE_FILE), as `/v1/edition` reports it; `valid` is
 * computed at each call (a license expires while the platform runs).
 */
export interface EditionLicense {
  license_id: string;
  customer: string;
  hosts: number;
  not_after: string;
  valid: boolean;
}
