// Build step after tsc: keeps only the .d.ts files the entries reach, and checks they are self-contained.
// A consumer compiling with skipLibCheck false reads every declaration an entry reaches, so those may import
// nothing but Node's builtins (by their plain names, as the code requires them) and each other, and the modules besides the entries may declare types only.
// bodykit/hono's declarations may also import its optional peer `hono`, and bodykit/nest's its optional peer `@nestjs/common`, which an app
// that imports that entry has; no other entry may reach them.
import { readFileSync, readdirSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'

const dist = path.join(import.meta.dirname, '..', 'dist')
const ENTRIES = ['index.d.ts', 'legacy.d.ts', 'multer.d.ts', 'koa.d.ts', 'nest.d.ts', 'hono.d.ts', 'hono.d.mts', 'hono-web.d.mts', 'h3.d.ts', 'h3.d.mts', 'h3-web.d.mts', 'web.d.ts']
/** The peer packages an entry's declarations (and those they reach) may import, by entry. */
const PEERS = { 'hono.d.ts': ['hono'], 'hono.d.mts': ['hono'], 'hono-web.d.mts': ['hono'], 'h3.d.ts': ['h3'], 'h3.d.mts': ['h3'], 'h3-web.d.mts': ['h3'], 'nest.d.ts': ['@nestjs/common'] }

/** The module specifiers a declaration file imports or references. */
function specifiersOf (text) {
  const found = []
  for (const match of text.matchAll(/(?:^|\s)(?:import|export)\b[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)) {
    found.push(match[1] ?? match[2] ?? match[3])
  }
  for (const match of text.matchAll(/\/\/\/\s*<reference\s+(?:types|path)="([^"]+)"/g)) found.push('reference:' + match[1])
  return found
}

const problems = new Set()
const reached = new Set()
for (const entry of ENTRIES) {
  const peers = PEERS[entry] ?? []
  const seen = new Set()
  const pending = [entry]
  while (pending.length > 0) {
    const file = pending.pop()
    if (seen.has(file)) continue
    seen.add(file)
    reached.add(file)
    const text = readFileSync(path.join(dist, file), 'utf8')
    if (!ENTRIES.includes(file) && /^(?:export )?declare (?:function|const|let|var|class|enum)\b/m.test(text)) {
      problems.add(file + ' is reached from an entry but declares values: mark internal exports `/** @internal */` or move them out')
    }
    for (const specifier of specifiersOf(text)) {
      if (builtinModules.includes(specifier)) continue
      if (peers.some((peer) => specifier === peer || specifier.startsWith(peer + '/'))) continue
      if (specifier.startsWith('./') || specifier.startsWith('../')) {
        pending.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/(\.js)?$/, '.d.ts'))
        continue
      }
      problems.add(file + ' (reached from ' + entry + ') imports "' + specifier + '", which a consumer may not have: only Node builtins, the public modules' +
        (peers.length > 0 ? ' and ' + peers.join(', ') : '') + ' are allowed')
    }
  }
}
if (problems.size > 0) {
  console.error('prune-declarations:\n  ' + [...problems].join('\n  '))
  process.exit(1)
}

for (const file of readdirSync(dist, { recursive: true })) {
  if (file.endsWith('.d.ts') && !reached.has(file.split(path.sep).join('/'))) rmSync(path.join(dist, file))
}
console.log('prune-declarations: kept ' + [...reached].sort().join(', '))
