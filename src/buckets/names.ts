/**
 * S3 bucket naming rules (general purpose buckets): 3-63 characters of lowercase letters, digits, dots and
 * hyphens, beginning and ending with a letter or digit, no two adjacent dots, not an IP address, none of S3's
 * reserved prefixes and suffixes. Returns what is wrong, or null.
 */
export function bucketNameProblem(name: string): string | null {
  if (name.length < 3 || name.length > 63) return "must be 3-63 characters long";
  if (!/^[a-z0-9.-]+$/.test(name)) return "may hold only lowercase letters, digits, dots and hyphens";
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return "must begin and end with a letter or digit";
  if (name.includes("..")) return "must not have two adjacent dots";
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return "must not look like an IP address";
  for (const prefix of ["xn--", "sthree-", "amzn-s3-demo-"])
    if (name.startsWith(prefix)) return `must not begin with ${prefix}`;
  for (const suffix of ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"])
    if (name.endsWith(suffix)) return `must not end with ${suffix}`;
  return null;
}
