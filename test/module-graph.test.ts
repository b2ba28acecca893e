// Keeps src/ layered: its modules import one another (types included) without a circle, so each imports only downward;
// and an entry reaches no framework it does not serve (require('bodykit') never loads @nestjs/*, rxjs, hono or koa).
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { describe, it } from 'node:test'
import ts from 'typescript'

const src = path.join(__dirname, '..', 'src')

/** Every .ts file under src/, as a path relative to it (`parsers/json.ts`). */
function sourceFiles (dir = src): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') ? [path.relative(src, full)] : []
  })
}

/** Every module specifier a file imports or re-exports, `import type` and `require()` included. */
function specifiersOf (file: string): string[] {
  const text = readFileSync(path.join(src, file), 'utf8')
  return ts.preProcessFile(text, true, true).importedFiles.map((imported) => imported.fileName)
}

/** The src/ modules a file imports or re-exports, `import type` included (a type-only circle is a circle in the design too). */
function localImports (file: string): string[] {
  return specifiersOf(file)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const resolved = path.join(path.dirname(file), specifier)
      const candidates = [resolved + '.ts', path.join(resolved, 'index.ts')]
      const found = candidates.find((candidate) => existsSync(path.join(src, candidate)))
      assert.ok(found, file + ' imports ' + specifier + ', which is not a module of src/')
      return found
    })
}

/** A circle in the graph as a list of files (the first repeated at the end), or null. */
function findCycle (graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  function visit (file: string): string[] | null {
    if (state.get(file) === 'done') return null
    if (state.get(file) === 'open') return [...stack.slice(stack.indexOf(file)), file]
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next)
      if (cycle) return cycle
    }
    stack.pop()
    state.set(file, 'done')
    return null
  }
  for (const file of graph.keys()) {
    const cycle = visit(file)
    if (cycle) return cycle
  }
  return null
}

describe('module graph of src/', () => {
  const graph = new Map(sourceFiles().map((file) => [file, localImports(file)]))

  it('reads the imports of every module', () => {
    assert.ok(graph.size >= 15, 'found too few modules: ' + [...graph.keys()].join(', '))
    assert.ok(graph.get('read.ts')?.includes('wire.ts'), 'read.ts should import wire.ts')
  })

  it('has no circle: every module imports only downward', () => {
    const cycle = findCycle(graph)
    assert.equal(cycle, null, 'import circle: ' + cycle?.join(' → '))
  })

  it('lets each entry of package.json reach only the dependencies, Node\'s builtins and the peers of its framework', () => {
    const pkg = JSON.parse(readFileSync(path.join(src, '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown>, dependencies: Record<string, string>, peerDependencies: Record<string, string> }
    // The CommonJS build of each entry, as `require()` loads it, back to its source.
    const entries = Object.entries(pkg.exports).flatMap(([name, target]) => {
      const file = JSON.stringify(target).match(/"\.\/dist\/([\w/-]+)\.js"/)?.[1]
      return file ? [[name, file + '.ts'] as const] : []
    })
    /** The peers each framework entry serves; every other entry may reach none. */
    const PEERS: Record<string, string[]> = { './hono': ['hono'], './h3': ['h3'], './nest': ['@nestjs/common', 'rxjs'] }
    const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
    assert.ok(entries.some(([name]) => name === './nest') && entries.some(([name]) => name === '.'), entries.join(' '))
    for (const [name, entry] of entries) {
      const reached = new Set<string>()
      const pending = [entry]
      for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
        if (reached.has(file)) continue
        reached.add(file)
        pending.push(...(graph.get(file) ?? []))
      }
      const packages = [...reached].flatMap(specifiersOf).filter((specifier) => !specifier.startsWith('.') && !builtinModules.includes(specifier)).map(packageOf)
      const foreign = [...new Set(packages)].filter((imported) => !(imported in pkg.dependencies) && !(PEERS[name] ?? []).includes(imported))
      assert.deepEqual(foreign, [], name + ' reaches ' + foreign.join(', '))
    }
  })

  it('finds a circle when there is one', () => {
    const looped = new Map(graph)
    looped.set('options.ts', [...(graph.get('options.ts') ?? []), 'errors.ts'])
    assert.deepEqual(findCycle(looped)?.slice(-1), findCycle(looped)?.slice(0, 1))
  })
})
