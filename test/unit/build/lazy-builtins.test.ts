import { runInNewContext } from 'node:vm'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { lazyBuiltins } from '../../../src/build/bundle-plugins.js'

// Two ES modules importing node:crypto the ways the framework does (named, namespace, default), bundled as a tool's
// bundle is (CommonJS, esbuild's interop), then evaluated with a process whose built-ins are counted when loaded.
const FILES: Record<string, string> = {
  'entry.js': `import { digest, names } from './a.js'
import { sign } from './b.js'
export const run = () => ({ digest: digest('x'), sign: sign('y'), names: names() })
export { inherited } from './b.js'
export { copied } from './a.js'`,
  'a.js': `import { createHash } from 'node:crypto'
import * as crypto from 'node:crypto'
export const digest = (text) => createHash('sha256').update(text).digest('hex')
export const names = () => typeof crypto.createHmac + ' ' + ('createHmac' in crypto) + ' ' + ('nothing' in crypto)
export const copied = () => Object.keys(crypto)`,
  'b.js': `import crypto, { createHmac } from 'node:crypto'
export const sign = (text) => createHmac('sha256', 'k').update(text).digest('hex') + ' ' + typeof crypto.randomBytes
export const inherited = () => [crypto.nothing, Object.keys(crypto).length > 0]`,
}

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: ['entry.js'],
    bundle: true,
    write: false,
    format: 'cjs',
    platform: 'node',
    logLevel: 'silent',
    plugins: [
      lazyBuiltins(['crypto']),
      {
        name: 'files',
        setup(b) {
          b.onResolve({ filter: /^\.?\/?\w+\.js$/ }, (args) => ({ path: args.path.replace('./', ''), namespace: 'f' }))
          b.onLoad({ filter: /.*/, namespace: 'f' }, (args) => ({ contents: FILES[args.path]!, loader: 'js' }))
        },
      },
    ],
  })
  return result.outputFiles[0]!.text
}

describe('lazy built-ins in the bundle', () => {
  it('load nothing when imported, and answer every named, namespace and default import once used', async () => {
    const loads: string[] = []
    const sandbox = {
      module: { exports: {} as Record<string, () => unknown> },
      process: {
        getBuiltinModule: (id: string) => {
          loads.push(id)
          return process.getBuiltinModule(id)
        },
      },
    }
    runInNewContext(`(function (module, exports) {${await bundle()}})(module, module.exports)`, sandbox)
    expect(loads).toEqual([])
    // esbuild's copy of the module for each importer holds nothing of it (no getter per key): what was the cost.
    expect(sandbox.module.exports.copied!()).toEqual(['default'])
    expect(loads).toEqual([])
    const { createHash, createHmac } = process.getBuiltinModule('node:crypto')
    expect(sandbox.module.exports.run!()).toEqual({
      digest: createHash('sha256').update('x').digest('hex'),
      sign: `${createHmac('sha256', 'k').update('y').digest('hex')} function`,
      names: 'function true false',
    })
    expect(sandbox.module.exports.inherited!()).toEqual([undefined, true])
    expect(loads).toEqual(['node:crypto'])
  })
})
