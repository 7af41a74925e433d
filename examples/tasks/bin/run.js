#!/usr/bin/env node
// Cache compiled code between runs (Node >= 22.1): start-up is most of an agent's wait on a CLI.
import module from 'node:module'

module.enableCompileCache?.()
const { run } = await import('agentcli/entry')
await run(new URL('..', import.meta.url))
