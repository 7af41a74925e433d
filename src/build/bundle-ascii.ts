/**
 * Make a bundle's text pure ASCII. V8 holds a source with a single character above U+00FF as a two-byte string
 * (twice the memory, and the boot could not read it as latin1), and esbuild's `charset: 'ascii'` escapes
 * strings, templates and identifiers but leaves comments (it keeps those on class fields) and regular expression
 * literals as they were. What is left is escaped here as `\uXXXX`, which means the same character in a comment
 * (nothing) and in a regular expression (the same code unit, or with the `u` flag a surrogate pair read as one
 * code point). A character right after a backslash is the one place where that would change the meaning
 * (`\é` is `é`, `\\u00e9` is not), so the build fails there instead of guessing.
 */
export function asciiOnly(text: string): string {
  return text.replace(/[^\0-\x7f]/g, (char, offset: number) => {
    let slashes = 0
    while (text.charCodeAt(offset - 1 - slashes) === 0x5c) slashes++
    if (slashes % 2 === 1)
      throw new Error(
        `the bundle has an escaped non-ASCII character (U+${hex(char)}) near ${JSON.stringify(text.slice(Math.max(0, offset - 40), offset + 2))}; it cannot be made ASCII safely`,
      )
    return `\\u${hex(char)}`
  })
}

function hex(char: string): string {
  return char.charCodeAt(0).toString(16).padStart(4, '0')
}
