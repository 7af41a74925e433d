import { builtin } from './builtin.js'

const { fileURLToPath } = builtin<typeof import('node:url')>('node:url')

/** A tool's root, given as a path or as a file URL (`new URL('..', import.meta.url)` in its bin), as a path. */
export function rootPath(root: string | URL): string {
  return typeof root === 'string' && !root.startsWith('file:') ? root : fileURLToPath(root)
}
