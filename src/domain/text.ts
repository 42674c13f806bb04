/** DD-005: summaries are the first 1024 characters of the full text. */
export const SUMMARY_LENGTH = 1024;

export function summarize(text: string, max = SUMMARY_LENGTH): string {
  if (text.length <= max) return text;
  // Do not split a surrogate pair: a summary must stay valid UTF-16.
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return text.slice(0, end);
}
