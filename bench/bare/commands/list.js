import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Command, Flags } from '@oclif/core'

export default class List extends Command {
  static flags = { status: Flags.option({ options: ['open', 'done'] })(), limit: Flags.integer({ default: 20 }) }
  async run() {
    const { flags } = await this.parse(List)
    let file = { tasks: [] }
    try {
      file = JSON.parse(await readFile(join(this.config.dataDir, 'tasks.json'), 'utf8'))
    } catch {}
    const items = file.tasks.filter((t) => !flags.status || t.status === flags.status).slice(0, flags.limit)
    this.log(
      JSON.stringify(
        { ok: true, schema_version: '1.0', data: { items, count: items.length }, meta: { duration_ms: 0 } },
        null,
        2,
      ),
    )
  }
}
