import type { ChildProcess } from 'node:child_process'
import { WARM_MESSAGE } from '../boot/warm.js'
import { signalGroup } from '../runtime/process-group.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { integerSetting } from '../settings/package-section.js'

/** How many warm processes `tool mcp` keeps unless the tool's author sets another number. */
export const DEFAULT_WARM_PROCESSES = 2

/** The bounds of `warm_processes`: 0 turns the pool off; each one is a booted Node process kept waiting. */
const WARM_BOUNDS = { min: 0, max: 8 } as const

/**
 * After this many warm processes in a row end before they are ready (a tool that cannot start, a Node it does not
 * support), the pool stops starting them: every call then starts cold, and answers what a cold start answers.
 */
export const MAX_EARLY_EXITS = 3

/** The number of warm processes the tool's author set in package.json (`"agentcli": {"mcp": {"warm_processes": n}}`), checked. */
export function warmProcessesOf(config: ToolConfig): number {
  return integerSetting(config, {
    section: 'mcp',
    key: 'warm_processes',
    fallback: DEFAULT_WARM_PROCESSES,
    ...WARM_BOUNDS,
  })
}

/**
 * At most `size` tool processes started ahead of calls, each waiting for the one call it will run (see
 * src/boot/warm.ts). A call takes a ready one, if any, and a replacement starts at once; a process is never given
 * back. Idle processes are not calls: they are not stopped by a signal but by closing their channel (they end
 * themselves), and killed by PID when the server exits any other way.
 */
export type WarmPool = {
  /** A ready process, no longer the pool's (the caller hands it its call), or `undefined`: start cold. */
  take(): ChildProcess | undefined
  /** The processes the pool holds now, ready or starting (never more than `size`). */
  held(): readonly ChildProcess[]
  /** Whether the pool turned itself off after {@link MAX_EARLY_EXITS} early exits in a row. */
  disabled(): boolean
  /** Start no more; close the channel of every process held; resolves once they all exited. */
  close(): Promise<void>
}

type Slot = { child: ChildProcess; ready: boolean; release: () => void }

const pools = new Set<WarmPool>()
let hooked = false

/** Every pool not closed yet (children.ts closes them when the server stops its calls). */
export function openPools(): readonly WarmPool[] {
  return [...pools]
}

/**
 * A pool of `size` warm processes, each started by `start` (which spawns the tool with an IPC channel and
 * `WARM_FLAG`). `onReady` hears the PID of each one ready for a call (the server logs it).
 */
export function warmPool(start: () => ChildProcess, size: number, onReady?: (pid: number) => void): WarmPool {
  const slots = new Set<Slot>()
  let closed = size <= 0
  let earlyExits = 0
  let off = false

  const fill = () => {
    while (!closed && !off && slots.size < size) {
      let child: ChildProcess
      try {
        child = start()
      } catch {
        // The same refusal would meet a cold start, which reports it: the pool just stops trying.
        off = true
        return
      }
      const onMessage = (message: { type?: unknown } | null) => {
        // A warm process says one thing, once: anything else is not one of ours to hand a call.
        if (slot.ready || message?.type !== WARM_MESSAGE.ready) {
          slots.delete(slot)
          slot.release()
          signalGroup(child, 'SIGKILL')
          return fill()
        }
        slot.ready = true
        earlyExits = 0
        if (child.pid !== undefined) onReady?.(child.pid)
      }
      const onExit = () => {
        if (!slots.delete(slot)) return
        if (!slot.ready && ++earlyExits >= MAX_EARLY_EXITS) {
          off = true
          process.stderr.write(
            `mcp: ${earlyExits} warm processes ended before they were ready: every call starts cold\n`,
          )
        }
        fill()
      }
      const onError = () => undefined
      const slot: Slot = {
        child,
        ready: false,
        release: () => {
          child.off('message', onMessage)
          child.off('exit', onExit)
          child.off('error', onError)
        },
      }
      slots.add(slot)
      // The pool's own bookkeeping must not keep the server's event loop alive.
      child.channel?.unref()
      child.on('message', onMessage)
      child.on('error', onError)
      child.once('exit', onExit)
    }
  }

  const pool: WarmPool = {
    take() {
      for (const slot of slots) {
        const { child } = slot
        if (!slot.ready || !child.connected || child.exitCode !== null || child.signalCode !== null) continue
        slots.delete(slot)
        slot.release()
        // On the next turn: spawning blocks this thread for a few ms, which the call being handed must not wait for.
        setImmediate(fill)
        return child
      }
      return undefined
    },
    held: () => [...slots].map((s) => s.child),
    disabled: () => off,
    close() {
      closed = true
      pools.delete(pool)
      const children = [...slots].map((s) => s.child)
      return Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve()
              child.once('exit', () => resolve())
              // A process still starting has no channel listener yet: it reads the closed channel once it does.
              if (child.connected) child.disconnect()
              else signalGroup(child, 'SIGKILL')
            }),
        ),
      ).then(() => undefined)
    },
  }
  pools.add(pool)
  if (!hooked) {
    hooked = true
    // However the server ends: no idle process outlives it (the channel closing ends them too; this is the PID's).
    process.on('exit', () => {
      for (const p of pools) for (const child of p.held()) signalGroup(child, 'SIGKILL')
    })
  }
  fill()
  return pool
}
