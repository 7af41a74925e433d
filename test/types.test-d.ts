/**
 * Type-level tests of the public API, checked by `tsc -p tsconfig.test.json` (part of `npm run check`): each
 * `@ts-expect-error` must meet an error, so a wrong return type that compiled would fail the check.
 */

import {
  AgentCommand,
  type CommandResult,
  type OutputOf,
  output,
  type Plan,
  type Progress,
  WriteCommand,
} from 'agentcli'

type Api = typeof import('agentcli')
// @ts-expect-error internals for the built-ins are not public exports
export type NoEnvPrefix = Api['envPrefix']
// @ts-expect-error
export type NoReadToolSettings = Api['readToolSettings']
// @ts-expect-error
export type NoGlobalFlags = Api['GLOBAL_FLAGS']
// …nor in an internal entry point: there is none.
// @ts-expect-error
export type NoInternal = typeof import('agentcli/internal')

const task = output((z) => z.object({ id: z.string(), title: z.string(), done: z.boolean() }))
type Task = OutputOf<typeof task>

export class GoodGet extends AgentCommand<typeof task> {
  static override output = task
  async execute() {
    return { id: '1', title: 'a', done: false }
  }
}

export class WrongField extends AgentCommand<typeof task> {
  static override output = task
  // @ts-expect-error `done` must be a boolean
  async execute() {
    return { id: '1', title: 'a', done: 'no' }
  }
}

export class MissingField extends AgentCommand<typeof task> {
  static override output = task
  // @ts-expect-error `title` is missing
  async execute() {
    return { id: '1', done: true }
  }
}

export class GoodStream extends AgentCommand<typeof task> {
  static override output = task
  static override stream = true
  async execute() {
    return (async function* () {
      yield { id: '1', title: 'a', done: true }
    })()
  }
}

export class WrongStream extends AgentCommand<typeof task> {
  static override output = task
  static override stream = true
  // @ts-expect-error each streamed item must match the schema
  async execute() {
    return (async function* () {
      yield { id: 1 }
    })()
  }
}

export class RawToo extends AgentCommand<typeof task> {
  static override output = task
  static override raw = true
  async execute() {
    if (this.globals.format === 'raw') return this.raw('id,title\n')
    return { id: '1', title: 'a', done: true }
  }
}

export class Untyped extends AgentCommand {
  async execute() {
    return 42
  }
}

type State = { title: string }

export class GoodCreate extends WriteCommand<State, typeof task> {
  static override output = task
  async plan(): Promise<Plan<State>> {
    return { changes: [], state: { title: 'x' } }
  }
  async apply(plan: Plan<State>) {
    // No `!`: the state of a Plan<State> is there.
    return { id: '1', title: plan.state.title, done: false }
  }
}

export class WrongCreate extends WriteCommand<State, typeof task> {
  static override output = task
  async plan(): Promise<Plan<State>> {
    return { changes: [], state: { title: 'x' } }
  }
  // @ts-expect-error apply() is checked against the output schema too
  async apply(plan: Plan<State>) {
    return { id: 1, title: plan.state.title }
  }
}

export class NoState extends WriteCommand {
  async plan(): Promise<Plan> {
    return { changes: [] }
  }
  async apply() {
    return { anything: true }
  }
}

// @ts-expect-error a Plan<State> without its state does not compile
export const forgotten: Plan<State> = { changes: [] }
export const optional: Plan<State | undefined> = { changes: [] }

export class Credentials extends AgentCommand {
  async execute() {
    const store = await this.credentialStore()
    const old = await this.credentials() // deprecated alias, still there
    const record = await this.credential()
    return { same: store === old, account: record.account }
  }
}

export class ShowsProgress extends AgentCommand {
  async execute() {
    const bar: Progress = this.progress({ label: 'work', total: 3 })
    bar.tick()
    bar.update(3)
    bar.done()
    return {}
  }
}

// CommandResult without a schema accepts anything, with one only the data (or an outcome / a job submission).
export const loose: CommandResult<undefined> = Symbol('anything')
export const tight: CommandResult<typeof task> = { id: '1', title: 'a', done: true } satisfies Task
// @ts-expect-error
export const wrong: CommandResult<typeof task> = { id: '1' }
