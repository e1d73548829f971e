/**
 * The form of a file's extracted text that goes into a chat request: whole up to FILE_TEXT_LIMIT
 * characters, else its first FILE_TEXT_LIMIT characters and a line saying it was cut and how long
 * the whole is (the model should know it has not seen everything). The stored text is never cut.
 * Characters are UTF-16 code units, as everywhere in the API; a cut never splits a surrogate pair.
 */
export function chatText(text: string, limit: number): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  const code = text.charCodeAt(limit - 1);
  const cut = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return {
    text: `${text.slice(0, cut)}\n\n[The file's text is cut here: it is ${text.length} characters long and only the first ${cut} are included.]`,
    truncated: true,
  };
}
