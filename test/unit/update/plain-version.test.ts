import semverGt from 'semver/functions/gt.js'
import semverLt from 'semver/functions/lt.js'
import semverValid from 'semver/functions/valid.js'
import { describe, expect, it } from 'vitest'
import { versionGt, versionLt, versionValid } from '../../../src/update/plain-version.js'

// Plain versions (answered without semver) and every near miss semver must judge itself.
const CORPUS = [
  '0.0.0',
  '0.1.0',
  '0.1.1',
  '0.10.0',
  '0.9.9',
  '1.0.0',
  '1.2.3',
  '1.2.10',
  '2.0.0',
  '10.0.0',
  '999999999999999.0.0',
  '1000000000000000.0.0',
  '9007199254740991.0.0',
  '9007199254740992.0.0',
  '01.2.3',
  '1.02.3',
  '1.2.03',
  'v1.2.3',
  '=1.2.3',
  ' 1.2.3',
  '1.2.3 ',
  '1.2.3-beta.1',
  '1.2.3-0',
  '1.2.3+build.5',
  '1.2',
  '1.2.3.4',
  '1..3',
  '',
  'x',
  '1.2.3\n',
  '١.٢.٣',
]

function answer<T>(fn: () => T): T | string {
  try {
    return fn()
  } catch (error) {
    return `throws ${(error as Error).name}`
  }
}

describe("plain versions answered as semver's functions answer", () => {
  it('valid', () => {
    for (const v of CORPUS) expect(versionValid(v), v).toBe(semverValid(v))
  })

  it('gt and lt, every pair, invalid ones throwing as semver does', () => {
    for (const a of CORPUS)
      for (const b of CORPUS) {
        expect(
          answer(() => versionGt(a, b)),
          `${a} > ${b}`,
        ).toEqual(answer(() => semverGt(a, b)))
        expect(
          answer(() => versionLt(a, b)),
          `${a} < ${b}`,
        ).toEqual(answer(() => semverLt(a, b)))
      }
  })
})
