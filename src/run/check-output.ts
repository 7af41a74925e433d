import { AgentError } from '../errors/agent-error.js'
import { utcTimes } from '../output/times.js'
import { type Declares, effectiveOutput } from '../schema/declared-output.js'
import { loadZod } from '../schema/output.js'
import { runEnv } from '../settings/run-env.js'

/*
 * Output validation under test (`AGENTCLI_VALIDATE_OUTPUT=1`, set by `runTool`): what a command prints is checked
 * against its declared schema, and a mismatch is the tool's bug (`E_INTERNAL`). Off, nothing here loads zod.
 */

/** Whether this process checks every command's output against its schema. */
export function validatingOutput(): boolean {
  return runEnv().AGENTCLI_VALIDATE_OUTPUT === '1'
}

/** Check `data` against everything `command` can print; `id` names the command in the error. */
export async function checkOutput(command: Declares, id: string | undefined, data: unknown): Promise<void> {
  const z = await loadZod()
  const schema = effectiveOutput(command, z)
  if (!schema) return
  // Validated as it will be printed: the renderer writes every time in UTC (see output/times.ts).
  const result = schema.safeParse(utcTimes(data))
  if (!result.success) {
    throw new AgentError('E_INTERNAL', `output of ${id} does not match its declared schema`, {
      details: {
        issues: result.error.issues.map((i) => ({ path: i.path.map(String), code: i.code, message: i.message })),
      },
    })
  }
}

/** Each streamed item checked against the item schema as it passes. */
export async function* checkedItems(
  command: Declares,
  id: string | undefined,
  items: AsyncIterable<unknown>,
): AsyncIterable<unknown> {
  for await (const item of items) {
    await checkOutput(command, id, item)
    yield item
  }
}
