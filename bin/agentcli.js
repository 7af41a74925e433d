#!/usr/bin/env node
// Node's compile cache only in the private code-cache directory, as a tool's start keeps it: never in Node's default
// place, the shared temporary directory, where another local user could plant compiled code first.
const { codeCacheDir, moduleCompileCache } = await import('../dist/boot/code-cache.js')
moduleCompileCache(codeCacheDir(process.env))
const { run } = await import('../dist/runtime/entry.js')
await run(new URL('..', import.meta.url))
