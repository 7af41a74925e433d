import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

/** What the template files may name: the tool's package name, its bin, today's date. */
export type TemplateValues = { name: string; bin: string; date: string }

/**
 * The files of `templates/init/` with their target paths and the values filled in. A path segment starting with
 * `_` starts with `.` in the tool (`_gitignore` → `.gitignore`): npm never packs a file named `.gitignore`, and
 * dot-directories are easy to lose in a package's `files`.
 */
export function renderTemplates(dir: string, values: TemplateValues): Map<string, string> {
  const out = new Map<string, string>()
  for (const file of walk(dir)) {
    const target = relative(dir, file)
      .split(sep)
      .map((segment) => (segment.startsWith('_') ? `.${segment.slice(1)}` : segment))
      .join('/')
    out.set(target, fill(readFileSync(file, 'utf8'), values))
  }
  return out
}

/** Replace `{{name}}`, `{{bin}}` and `{{date}}`; anything else in braces (a workflow's `${{ … }}`) is left alone. */
export function fill(text: string, values: TemplateValues): string {
  return text.replace(/\{\{(name|bin|date)\}\}/g, (_, key: keyof TemplateValues) => values[key])
}

function walk(dir: string): string[] {
  const files: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files.push(...walk(path))
    else files.push(path)
  }
  return files
}
