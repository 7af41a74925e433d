/**
 * oclif's theme, for the parser's error messages: agentcli strips colour from every parser message it keeps
 * (`cleanMessage`), so plain text is the same text.
 */
export function colorize(_color: unknown, text: string): string {
  return text
}
