/**
 * Korean business registration number (사업자등록번호): 10 digits, usually written 123-45-67890. The last digit
 * is a check digit: weights 1,3,7,1,3,7,1,3,5 over the first nine digits, plus the tens digit of
 * (9th digit x 5); the check digit is (10 - sum mod 10) mod 10.
 */
const WEIGHTS = [1, 3, 7, 1, 3, 7, 1, 3, 5];

/** The ten digits without separators, or null when the text is not a well-formed number. */
export function normaliseBrn(text: string): string | null {
  const trimmed = text.trim();
  if (!/^\d{3}-?\d{2}-?\d{5}$/.test(trimmed)) return null;
  return trimmed.replace(/-/g, "");
}

export function isValidBrn(text: string): boolean {
  const digits = normaliseBrn(text);
  if (!digits || digits.startsWith("000")) return false;
  const d = [...digits].map(Number);
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += d[i] * WEIGHTS[i];
  sum += Math.floor((d[8] * 5) / 10);
  return (10 - (sum % 10)) % 10 === d[9];
}

export const formatBrn = (digits: string) => `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`;
