#!/usr/bin/env node
// Cache compiled code between runs (Node >= 22.1): start-up is most of an agent's wait on a CLI.
import module from 'node:module'

module.enableCompileCache?.()
const { start } = await import('agentcli/boot')
await start(new URL('..', import.meta.url))
