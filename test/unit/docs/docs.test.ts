import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

describe('docs/errors.md', () => {
  it('matches the catalogue table', async () => {
    const { renderErrorsDoc } = await import(join(ROOT, 'scripts/errors-doc.mjs'))
    expect(readFileSync(join(ROOT, 'docs/errors.md'), 'utf8')).toBe(renderErrorsDoc())
  })
})
