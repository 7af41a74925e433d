#!/usr/bin/env node
import module from 'node:module'

module.enableCompileCache?.()
const { run } = await import('../dist/runtime/entry.js')
await run(new URL('..', import.meta.url))
