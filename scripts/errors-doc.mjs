#!/usr/bin/env node
// Writes docs/errors.md from the one catalogue table (run after build). test/unit/docs/docs.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs'
import { CORE_ERRORS, EXIT_CODES } from '../dist/index.js'

export function renderErrorsDoc() {
  const lines = [
    '# Error codes',
    '',
    'Generated from `src/errors/catalogue.ts` by `node scripts/errors-doc.mjs`; a test fails when this file is stale.',
    'Agents branch on `error.code`, never on `error.message`. The exit code and `retryable` of every code come from',
    'this one table.',
    '',
    '| code | exit | retryable | meaning |',
    '| --- | --- | --- | --- |',
    ...Object.entries(CORE_ERRORS).map(
      ([code, e]) => `| \`${code}\` | ${e.exit} | ${e.retryable} | ${e.description} |`,
    ),
    '',
    '## Exit codes',
    '',
    '| exit | meaning |',
    '| --- | --- |',
    ...Object.entries(EXIT_CODES).map(([exit, meaning]) => `| ${exit} | ${meaning} |`),
    '',
    '## Extension codes',
    '',
    'A tool declares its own codes under `"agentcli": { "errors": { … } }` in its package.json:',
    '',
    '```json',
    '"agentcli": { "errors": { "E_QUOTA_EXCEEDED": { "exit": 7, "description": "Quota used up for today." } } }',
    '```',
    '',
    'An extension code matches `E_[A-Z0-9_]+`, cannot redefine a core code, and takes an exit of 1, 3, 4, 5, 6, 7',
    'or 8 (never 0, 2, 9 or 130). `retryable` follows the exit class (true exactly for 7 and 8); a declaration that',
    'contradicts it is refused at start-up. A thrown code that is neither core nor declared is reported as',
    '`E_INTERNAL` with `details.undeclared_code`.',
    '',
  ]
  return lines.join('\n')
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsDoc())
}
