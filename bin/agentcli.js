#!/usr/bin/env node
// Started as every tool is (agentcli/boot): the Node range checked first, and Node's compile cache only in the private
// code-cache directory, never in its default place, the shared temporary directory others can write.
const { start } = await import('../dist/boot/start.js')
await start(new URL('..', import.meta.url))
