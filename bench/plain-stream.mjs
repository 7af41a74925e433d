// The baseline for streams: what a hand-written NDJSON loop costs, with no framework around it.
const n = Number(process.argv[2])
for (let i = 0; i < n; i++)
  process.stdout.write(
    `${JSON.stringify({ ok: true, schema_version: '1.0', type: 'item', data: { i, label: `item ${i}` } })}\n`,
  )
process.stdout.write(`${JSON.stringify({ ok: true, schema_version: '1.0', type: 'summary', data: { count: n } })}\n`)
