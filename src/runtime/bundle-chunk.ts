import { builtin } from '../boot/builtin.js'

const { readFileSync } = builtin<typeof import('node:fs')>('node:fs')
const Module = builtin<typeof import('node:module')>('node:module')
const { join } = builtin<typeof import('node:path')>('node:path')
const { constants, Script } = builtin<typeof import('node:vm')>('node:vm')

/** Where a tool with many commands has the main bundle's self-contained command modules, next to `dist/bundle.cjs`. */
export const BUNDLE_CHUNK_DIR = 'dist/chunks'

/**
 * Evaluate one command's chunk (`src/build/bundle-chunks.ts`): a CommonJS
 * module whose `agentcli` and `@oclif/core` are the bundle's own (`shared`), so its command class extends the
 * bundle's `AgentCommand`. `dir` is the chunks' directory relative to the tool's root, `bundleDir` the bundle's.
 * Anything else it requires (the tool's external dependencies) resolves from the chunk's place, as in the bundle.
 */
export function loadChunk(
  bundleDir: string,
  dir: string,
  name: string,
  shared: Record<string, unknown>,
): Record<string, unknown> {
  const file = join(bundleDir, '..', dir, name)
  const module = new Module(file)
  module.filename = file
  const base = Module.createRequire(file)
  const require = Object.assign((id: string) => (Object.hasOwn(shared, id) ? shared[id] : base(id)), base)
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), {
    filename: file,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  script.runInThisContext()(module.exports, require, module, file, join(file, '..'))
  module.loaded = true
  return module.exports as Record<string, unknown>
}
