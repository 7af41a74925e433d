#!/usr/bin/env node
// The release steps a CI runner runs (archive, checksums, verify); the result is JSON on stdout, progress on stderr.
import { main } from '../dist/release/cli.js'

const { code, result } = await main(process.argv.slice(2))
if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
process.exitCode = code
