#!/usr/bin/env node
// Writes docs/api.md from the JSDoc of the four public entry points (package.json `exports`), read from src/ with
// the TypeScript compiler API. test/unit/docs/api-docs.test.ts fails when docs/api.md is stale and when an export,
// or a member of one, has no JSDoc. `npm run api-doc` rewrites it.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
/** A type longer than this is shortened: a union to its first members, anything else cut. */
const MAX_TYPE = 110
const FORMAT =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope |
  ts.TypeFormatFlags.WriteClassExpressionAsTypeLiteral
const KIND_ORDER = ['class', 'function', 'constant', 'namespace', 'type']

/** The entry points, as package.json `exports` names them: the package subpath and its source file. */
export function entryPoints(root = ROOT) {
  const { name, exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => ({
      name: subpath === '.' ? name : `${name}/${subpath.slice(2)}`,
      source: target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'),
    }))
}

/**
 * Read the entry points and return `{ markdown, undocumented }`: the page, and every export or member of one that
 * the page shows without JSDoc (as `entry: Export.member`).
 */
export function buildApiDoc(root = ROOT) {
  const entries = entryPoints(root)
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      },
    },
  )
  const program = ts.createProgram(
    entries.map((e) => join(root, e.source)),
    { ...config.options, noEmit: true },
  )
  const checker = program.getTypeChecker()
  const undocumented = []
  const inSource = (decl) => !decl.getSourceFile().fileName.includes('/node_modules/')

  // Every export of every entry point, resolved, so that a member inherited from another documented export can
  // point there instead of being repeated.
  const modules = entries.map((entry) => {
    const file = program.getSourceFile(join(root, entry.source))
    if (!file) throw new Error(`${entry.source}: not found`)
    const exports = checker
      .getExportsOfModule(checker.getSymbolAtLocation(file))
      .map((exported) => describeExport(exported))
      .sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || compare(a.name, b.name))
    return { entry, exports }
  })
  const documented = new Map()
  for (const { exports } of modules) for (const e of exports) if (e.symbol) documented.set(e.symbol, e.name)

  function describeExport(exported) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const decl = symbol.declarations?.[0]
    const external = !decl || !inSource(decl)
    let kind = 'type'
    if (symbol.flags & ts.SymbolFlags.Class) kind = 'class'
    else if (symbol.flags & ts.SymbolFlags.Function) kind = 'function'
    else if (symbol.flags & ts.SymbolFlags.Variable) kind = 'constant'
    else if (symbol.flags & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) kind = 'namespace'
    return { name: exported.name, symbol, decl, external, kind }
  }

  /** The class, type or interface declaring a member, if any. */
  function containerOf(member) {
    for (let node = member.declarations?.[0]; node; node = node.parent) {
      if (ts.isClassDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isInterfaceDeclaration(node)) return node
      if (ts.isFunctionDeclaration(node)) return undefined
    }
    return undefined
  }

  const exportNameOf = (node) => {
    const symbol = node?.name && checker.getSymbolAtLocation(node.name)
    return symbol && documented.get(symbol)
  }

  /**
   * A class and its private bases up to the nearest documented one: their members are shown with the class, the
   * rest belong to that documented base (`WriteCommand` points at `AgentCommand` for what it inherits).
   */
  function classChain(decl) {
    const chain = new Set([decl])
    let type = checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(decl.name))
    for (;;) {
      const base = checker.getBaseTypes(type)[0]
      const next = base?.symbol?.declarations?.[0]
      if (!next || !inSource(next) || !ts.isClassDeclaration(next)) return { chain, base: undefined }
      if (exportNameOf(next)) return { chain, base: exportNameOf(next) }
      chain.add(next)
      type = base
    }
  }

  /** The documented export a member belongs to when it is not `owner`'s own (through an intersection or a base). */
  function ownerOf(member, owner, chain) {
    const container = containerOf(member)
    if (chain && container && ts.isClassDeclaration(container)) return chain.chain.has(container) ? owner : chain.base
    return exportNameOf(container)
  }

  /** JSDoc text with `{@link X}` as code, and the tags a reader needs (params, returns, examples, deprecation). */
  function docOf(symbol) {
    const text = partsToMarkdown(symbol.getDocumentationComment(checker))
    const tags = symbol.getJsDocTags(checker)
    const out = []
    const deprecated = tags.find((t) => t.name === 'deprecated')
    if (deprecated) out.push(`**Deprecated.** ${partsToMarkdown(deprecated.text ?? [])}`.trim())
    if (text) out.push(text)
    const params = tags.filter((t) => t.name === 'param' && t.text)
    if (params.length > 0)
      out.push(
        params
          .map((t) => {
            const [name, ...rest] = partsToMarkdown(t.text).split(/\s+/)
            return `- \`${name}\`: ${rest.join(' ').replace(/^-\s*/, '')}`
          })
          .join('\n'),
      )
    for (const t of tags.filter((t) => t.name === 'returns' || t.name === 'throws' || t.name === 'see'))
      out.push(
        `*${t.name === 'returns' ? 'Returns' : t.name === 'throws' ? 'Throws' : 'See'}:* ${partsToMarkdown(t.text ?? [])}`,
      )
    for (const t of tags.filter((t) => t.name === 'example')) {
      const body = partsToMarkdown(t.text ?? []).trim()
      out.push(body.includes('```') ? `**Example**\n\n${body}` : `**Example**\n\n\`\`\`ts\n${body}\n\`\`\``)
    }
    return out.join('\n\n')
  }

  function partsToMarkdown(parts) {
    let out = ''
    let link
    for (const part of parts) {
      if (part.kind === 'link') {
        if (part.text === '{@link ') link = ''
        else if (part.text === '}' && link !== undefined) {
          out += `\`${link.trim()}\``
          link = undefined
        }
      } else if (link !== undefined) link += part.text
      else out += part.text
    }
    return out.trim()
  }

  const where = (decl) => {
    const file = decl.getSourceFile()
    return `${relative(root, file.fileName)}:${file.getLineAndCharacterOfPosition(decl.getStart()).line + 1}`
  }
  const typeText = (type, at) => checker.typeToString(type, at, FORMAT)
  // Types as written in the source, without the comments inside them (each member's JSDoc is listed apart).
  const printer = ts.createPrinter({ removeComments: true })
  const printed = (node) => printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile())
  const nodeText = (node) => printed(node).replace(/\s+/g, ' ').replace(/;\s*}/g, ' }')
  /** A type as a block: the printer's lines, indented by two, at most 24 of them. */
  const blockText = (node) => {
    const lines = printed(node)
      .split('\n')
      .map((l) => l.replace(/^( {4})+/, (m) => ' '.repeat(m.length / 2)))
    return lines.length <= 24
      ? lines.join('\n')
      : `${lines.slice(0, 23).join('\n')}\n  // … ${lines.length - 23} more lines`
  }

  function signatureText(name, sig, at) {
    return `${name}${checker.signatureToString(sig, at, FORMAT)}`
  }

  /** One member of an object type or a class, as `name?: Type` or `name(params): Result`. */
  function memberLine(member, at, prefix = '') {
    const decl = member.declarations?.[0]
    const optional = member.flags & ts.SymbolFlags.Optional ? '?' : ''
    const type = checker.getTypeOfSymbolAtLocation(member, decl ?? at)
    const name = /^[A-Za-z_$][\w$]*$/.test(member.name) ? member.name : JSON.stringify(member.name)
    if (decl && (ts.isMethodDeclaration(decl) || ts.isMethodSignature(decl) || isFunctionValued(decl))) {
      const sigs = checker.getSignaturesOfType(checker.getNonNullableType(type), ts.SignatureKind.Call)
      return sigs.map((sig) => `${prefix}${name}${optional}${checker.signatureToString(sig, decl, FORMAT)}`)
    }
    if (decl && ts.isGetAccessorDeclaration(decl)) {
      const text = decl.type ? nodeText(decl.type) : typeText(type, decl)
      const setter = member.declarations.some((d) => ts.isSetAccessorDeclaration(d))
      return [`${prefix}${setter ? '' : 'readonly '}${name}: ${text}`]
    }
    const readonly = decl && ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Readonly ? 'readonly ' : ''
    const text = decl?.type ? nodeText(decl.type) : typeText(type, decl ?? at)
    return [`${prefix}${readonly}${name}${optional}: ${text}`]
  }

  function isFunctionValued(decl) {
    if (ts.isShorthandPropertyAssignment(decl)) {
      const type = checker.getTypeAtLocation(decl.name)
      return type.getCallSignatures().length > 0 && type.getProperties().length === 0
    }
    const init = ts.isPropertyAssignment(decl) || ts.isPropertyDeclaration(decl) ? decl.initializer : undefined
    return init !== undefined && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))
  }

  /** The members a reader of `owner` needs: declared in src/, not private, not another export's. */
  function membersOf(owner, type, at, { statics = false, chain } = {}) {
    const shown = []
    const elsewhere = new Set()
    const foreign = new Set()
    for (const member of checker.getPropertiesOfType(type)) {
      const decl = member.declarations?.[0]
      if (statics && member.name === 'prototype') continue
      if (!decl || !inSource(decl)) {
        // A class's statics from outside (`Error.captureStackTrace`) are nobody's API here.
        const outer = containerOf(member)?.name?.text
        if (!statics && outer) foreign.add(outer)
        continue
      }
      if (member.name.startsWith('_') || member.name.startsWith('#')) continue
      const flags = ts.getCombinedModifierFlags(decl)
      if (flags & ts.ModifierFlags.Private) continue
      const from = ownerOf(member, owner, chain)
      if (from && from !== owner) {
        elsewhere.add(from)
        continue
      }
      shown.push({
        member,
        flags,
        lines: memberLine(member, at, flags & ts.ModifierFlags.Protected ? 'protected ' : ''),
      })
    }
    return { shown, elsewhere: [...elsewhere].sort(compare), foreign: [...foreign].sort(compare) }
  }

  function renderMembers(entryName, ownerName, title, { shown, elsewhere, foreign }) {
    const out = []
    if (shown.length > 0) {
      out.push(`**${title}**`, '')
      for (const { member, lines } of shown) {
        const doc = docOf(member)
        if (!doc) undocumented.push(`${entryName}: ${ownerName}.${member.name} (${where(member.declarations[0])})`)
        const method = lines.length > 1 || /^[\w\s]*\w[?]?[<(]/.test(lines[0])
        const head = lines.map((l) => code(method ? shortenSignature(l) : shorten(l))).join(' / ')
        out.push(`- ${head}${doc ? ` — ${indent(doc)}` : ''}`)
      }
      out.push('')
    }
    const also = []
    if (elsewhere.length > 0) also.push(`every member of ${elsewhere.map((n) => link(n)).join(', ')}`)
    if (foreign.length > 0) also.push(`the members of ${foreign.map((n) => `\`${n}\``).join(', ')} (not agentcli's)`)
    if (also.length > 0) out.push(`${shown.length > 0 ? 'Also' : 'Has'} ${also.join(' and ')}.`, '')
    return out
  }

  function renderExport(entryName, e) {
    const out = [`### ${e.name}`, '']
    if (e.external) {
      const from = externalModule(e.decl)
      const names = e.kind === 'namespace' ? checker.getExportsOfModule(e.symbol).map((s) => s.name) : []
      out.push(
        `*${e.kind}*, re-exported from \`${from}\`${
          names.length > 0
            ? `: ${names
                .sort(compare)
                .map((n) => `\`${n}\``)
                .join(', ')}`
            : ''
        }.`,
        '',
      )
      return out
    }
    out.push(`*${e.kind}* · \`${relative(root, e.decl.getSourceFile().fileName)}\``, '')
    const doc = docOf(e.symbol)
    if (!doc) undocumented.push(`${entryName}: ${e.name} (${where(e.decl)})`)
    if (doc) out.push(doc, '')
    const decl = e.decl
    if (e.kind === 'function') {
      const type = checker.getTypeOfSymbolAtLocation(e.symbol, decl)
      const sigs = checker.getSignaturesOfType(type, ts.SignatureKind.Call)
      out.push('```ts', ...sigs.map((s) => `function ${shortenSignature(signatureText(e.name, s, decl))}`), '```', '')
    } else if (e.kind === 'constant') {
      const text =
        ts.isVariableDeclaration(decl) && decl.type
          ? nodeText(decl.type)
          : typeText(checker.getTypeOfSymbolAtLocation(e.symbol, decl), decl)
      out.push('```ts', `const ${e.name}: ${shorten(text, 200)}`, '```', '')
      const type = checker.getTypeOfSymbolAtLocation(e.symbol, decl)
      if (
        type.flags & (ts.TypeFlags.Object | ts.TypeFlags.Intersection) &&
        !checker.isArrayLikeType(type) &&
        type.getCallSignatures().length === 0
      ) {
        const names = checker.getPropertiesOfType(type).map((p) => p.name)
        if (names.length > 0)
          out.push(
            `Members: ${names
              .sort(compare)
              .map((n) => `\`${n}\``)
              .join(', ')}.`,
            '',
          )
      }
    } else if (e.kind === 'class') {
      const heritage = decl.heritageClauses?.map((h) => ` ${nodeText(h).trim()}`).join('') ?? ''
      const params = decl.typeParameters ? `<${decl.typeParameters.map(nodeText).join(', ')}>` : ''
      const abstract = ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Abstract ? 'abstract ' : ''
      const ctor = checker.getTypeOfSymbolAtLocation(e.symbol, decl)
      const ctors = decl.members.some(
        (m) => ts.isConstructorDeclaration(m) && !(ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private),
      )
        ? checker
            .getSignaturesOfType(ctor, ts.SignatureKind.Construct)
            .map((s) => `new ${e.name}${checker.signatureToString(s, decl, FORMAT).replace(/: [^:]+$/, '')}`)
        : []
      out.push('```ts', `${abstract}class ${e.name}${params}${heritage}`, ...ctors, '```', '')
      const chain = classChain(decl)
      const statics = membersOf(e.name, ctor, decl, { statics: true, chain })
      const members = membersOf(e.name, checker.getDeclaredTypeOfSymbol(e.symbol), decl, { chain })
      // A documented base's statics and members are one pointer, said once.
      statics.elsewhere = []
      members.elsewhere = []
      out.push(...renderMembers(entryName, e.name, 'Statics', statics))
      out.push(...renderMembers(entryName, e.name, 'Members', members))
      if (chain.base) out.push(`Inherits every static and member of ${link(chain.base)}.`, '')
    } else if (e.kind === 'type') {
      const type = checker.getDeclaredTypeOfSymbol(e.symbol)
      const params = decl.typeParameters ? `<${decl.typeParameters.map(nodeText).join(', ')}>` : ''
      const body = ts.isTypeAliasDeclaration(decl) ? decl.type : undefined
      const objectLike =
        !type.isUnion() &&
        (type.flags & ts.TypeFlags.Object || type.isIntersection()) &&
        checker.getSignaturesOfType(type, ts.SignatureKind.Call).length === 0 &&
        checker.getPropertiesOfType(type).length > 0 &&
        !(body && ts.isTypeQueryNode(body))
      if (!objectLike) {
        out.push('```ts', `type ${e.name}${params} = ${body ? blockText(body) : typeText(type, decl)}`, '```', '')
        out.push(...valuesOf(type, body))
      } else {
        out.push(
          '```ts',
          `type ${e.name}${params}${body && !ts.isTypeLiteralNode(body) ? ` = ${outline(body)}` : ''}`,
          '```',
          '',
        )
        out.push(...renderMembers(entryName, e.name, 'Members', membersOf(e.name, type, decl)))
      }
    }
    return out
  }

  /** An intersection with its object literals elided: their members are listed below it. */
  function outline(body) {
    const parts = ts.isIntersectionTypeNode(body) ? body.types : [body]
    return shorten(parts.map((t) => (ts.isTypeLiteralNode(t) ? '{ … }' : nodeText(t))).join(' & '), 200)
  }

  /** The values of a union of literals written some other way (`(typeof X)[number]`, `keyof typeof Y`). */
  function valuesOf(type, body) {
    if (!type.isUnion() || !type.types.every((t) => t.isLiteral())) return []
    if (body && ts.isUnionTypeNode(body) && body.types.every((t) => ts.isLiteralTypeNode(t))) return []
    const values = type.types.map((t) => `\`${typeText(t)}\``)
    const shown = values.length <= 16 ? values : [...values.slice(0, 12), `… (${values.length - 12} more)`]
    return [`Values: ${shown.join(', ')}.`, '']
  }

  const lines = [
    '# API reference',
    '',
    'Generated from the JSDoc of the source by `npm run api-doc` (`scripts/api-doc.mjs`); a test fails when this page',
    'is stale or when an export, or a member of one, has no JSDoc. The [guide](guide/README.md) shows how the pieces',
    'fit together; this page lists every export of the four entry points, with the members of every object type and',
    'class (what you may set, read or call), in the order: classes, functions, constants, types. Types are printed as',
    'written in the source; a long one is shortened (`…`).',
    '',
    '## Contents',
    '',
  ]
  const slugs = new Map()
  const anchor = (heading) => {
    const base = heading
      .toLowerCase()
      .replace(/[^a-z0-9 _-]/g, '')
      .replace(/ /g, '-')
    const n = slugs.get(base) ?? 0
    slugs.set(base, n + 1)
    return n === 0 ? base : `${base}-${n}`
  }
  // Anchors are given in page order, the way GitHub numbers repeated headings.
  anchor('API reference')
  anchor('Contents')
  const anchors = modules.map(({ entry, exports }) => ({
    entry: anchor(entry.name),
    exports: new Map(exports.map((e) => [e.name, anchor(e.name)])),
  }))
  const exportAnchor = new Map()
  for (const a of anchors)
    for (const [name, slug] of a.exports) if (!exportAnchor.has(name)) exportAnchor.set(name, slug)
  function link(name) {
    return `[\`${name}\`](#${exportAnchor.get(name)})`
  }
  modules.forEach(({ entry, exports }, i) => {
    lines.push(`- [\`${entry.name}\`](#${anchors[i].entry}) (${exports.length})`)
    for (const kind of KIND_ORDER) {
      const ofKind = exports.filter((e) => e.kind === kind)
      if (ofKind.length === 0) continue
      const label = kind === 'class' ? 'classes' : `${kind}s`
      lines.push(`  - ${label}: ${ofKind.map((e) => `[\`${e.name}\`](#${anchors[i].exports.get(e.name)})`).join(', ')}`)
    }
  })
  lines.push('')
  for (const { entry, exports } of modules) {
    lines.push(`## ${entry.name}`, '')
    const file = program.getSourceFile(join(root, entry.source))
    const head = moduleDoc(file)
    lines.push(`\`import { … } from '${entry.name}'\` · \`${entry.source}\``, '')
    if (head) lines.push(head, '')
    for (const e of exports) lines.push(...renderExport(entry.name, e))
  }
  const markdown = `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`
  return { markdown, undocumented, counts: count(modules) }
}

function count(modules) {
  return modules.map(({ entry, exports }) => ({
    entry: entry.name,
    runtime: exports.filter((e) => e.kind !== 'type').length,
    types: exports.filter((e) => e.kind === 'type').length,
  }))
}

/** The file's leading JSDoc, when it is not the JSDoc of its first statement. */
function moduleDoc(file) {
  const first = file.statements[0]
  if (!first) return ''
  const comments = ts.getLeadingCommentRanges(file.text, 0) ?? []
  const own = ts.getJSDocCommentsAndTags(first).map((d) => d.pos)
  const doc = comments.find((c) => file.text.startsWith('/**', c.pos) && !own.includes(c.pos))
  if (!doc) return ''
  return file.text
    .slice(doc.pos + 3, doc.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, ''))
    .join('\n')
    .replace(/\{@link ([^}]+)\}/g, '`$1`')
    .trim()
}

function externalModule(decl) {
  const file = decl?.getSourceFile().fileName ?? ''
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:lib\/|dist\/)?(.*?)(?:\/index)?\.d\.ts$/.exec(file)
  return match ? (match[2] ? `${match[1]}/${match[2]}` : match[1]) : file
}

function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0
}

function indent(text) {
  return text.replace(/\n/g, '\n  ')
}

function code(text) {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``
}

/** Split `text` on `separator` outside brackets, parentheses, braces and quotes. */
function splitTop(text, separator) {
  const parts = []
  let depth = 0
  let quote
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote) {
      if (c === '\\') i++
      else if (c === quote) quote = undefined
    } else if (c === "'" || c === '"' || c === '`') quote = c
    else if ('([{<'.includes(c)) depth++
    else if (')]}>'.includes(c) && !(c === '>' && text[i - 1] === '=')) depth--
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i))
      start = i + separator.length
    }
  }
  parts.push(text.slice(start))
  return parts
}

/** A type cut to `max` characters: a union keeps its first members and says how many it left out. */
export function shorten(text, max = MAX_TYPE) {
  if (text.length <= max) return text
  const colon = splitTop(text, ': ')
  const head = colon.length > 1 ? `${colon[0]}: ` : ''
  const type = colon.length > 1 ? colon.slice(1).join(': ') : text
  const members = splitTop(type, ' | ')
  if (members.length > 2) {
    let kept = head + members[0]
    let n = 1
    while (n < members.length - 1 && kept.length + members[n].length + 3 <= max) kept += ` | ${members[n++]}`
    return `${kept} | … (${members.length - n} more)`
  }
  return `${text.slice(0, max - 1).trimEnd()}…`
}

/** A signature too long for one line keeps its parameters whole, its result shortened. */
function shortenSignature(text) {
  return text.length <= MAX_TYPE * 2 ? text : `${text.slice(0, MAX_TYPE * 2 - 1).trimEnd()}…`
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const { markdown, undocumented, counts } = buildApiDoc()
  writeFileSync(join(ROOT, 'docs/api.md'), markdown)
  for (const c of counts) process.stderr.write(`api-doc: ${c.entry}: ${c.runtime} runtime exports, ${c.types} types\n`)
  if (undocumented.length > 0) process.stderr.write(`api-doc: without JSDoc:\n  ${undocumented.join('\n  ')}\n`)
}
