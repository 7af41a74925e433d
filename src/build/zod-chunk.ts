import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import type { Plugin } from 'esbuild'

/** zod as one CommonJS file beside the bundle, built from the zod the tool resolves. */
export const ZOD_CHUNK = 'dist/bundle-zod.cjs'

/*
 * zod is loaded only when a run needs a schema (`--fields`, `reference`, output validation under test). From
 * node_modules that is some 60 ES modules to resolve, link and compile; as one file, with Node's compile cache, a
 * `list --fields` spends ≈ 40 ms on it instead of ≈ 135 (docs/performance.md). It stays out of the bundle itself,
 * which every start reads whole.
 */

/**
 * Build {@link ZOD_CHUNK} from the `zod` the tool's root resolves (the one its bundle imported before), or write
 * nothing and answer false when it resolves none. From zod's ES modules, as `import('zod')` loaded it: its CommonJS
 * entry requires every locale module at load (≈ 30 ms more to evaluate), where one scope of ES modules declares them.
 */
export async function buildZodChunk(
  esbuild: typeof import('esbuild'),
  root: string,
  options: Pick<import('esbuild').BuildOptions, 'target' | 'charset'>,
): Promise<boolean> {
  try {
    createRequire(join(root, 'package.json')).resolve('zod')
  } catch {
    return false
  }
  await esbuild.build({
    ...options,
    entryPoints: ['zod'],
    absWorkingDir: root,
    outfile: join(root, ZOD_CHUNK),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    minifyWhitespace: true,
    logLevel: 'silent',
  })
  return true
}

/**
 * Every `import … from 'zod'` of a bundle file written to `outDir` (the framework's lazy one and a tool's own) reads
 * {@link ZOD_CHUNK}: one zod instance per process, found beside the bundle wherever the tool is installed.
 */
export function zodFromChunk(root: string, outDir: string): Plugin {
  const path = relative(join(root, outDir), join(root, ZOD_CHUNK))
  return {
    name: 'agentcli-zod-chunk',
    setup(build) {
      build.onResolve({ filter: /^zod$/ }, () => ({ path: 'zod', namespace: 'agentcli-zod' }))
      build.onLoad({ filter: /.*/, namespace: 'agentcli-zod' }, () => ({
        contents: `module.exports = require(require('node:path').join(__dirname, ${JSON.stringify(path)}))`,
        loader: 'js',
      }))
    },
  }
}
