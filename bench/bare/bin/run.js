#!/usr/bin/env node
// The baseline: stock @oclif/core 5 doing the same work as `tasks list`, with a manifest.
import { execute } from '@oclif/core'

await execute({ dir: import.meta.url })
