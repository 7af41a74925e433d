#!/usr/bin/env node
// The whole bin: agentcli/boot runs the tool's bundle (dist/bundle.cjs) when it has one, else its modules.
const { start } = await import('agentcli/boot')
await start(new URL('..', import.meta.url))
