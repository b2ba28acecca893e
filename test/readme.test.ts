// Keeps README.md true to the code and short: its errors table lists exactly the error types, its API tables every option,
// and the depth lives in docs/ (test/docs.test.ts compiles the examples and follows the links of both).
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'

const root = path.join(__dirname, '..')
const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
const docs = (page: string): string => readFileSync(path.join(root, 'docs', page), 'utf8')
const typesSource = readFileSync(path.join(root, 'src', 'types.ts'), 'utf8')
const optionsSource = readFileSync(path.join(root, 'src', 'options.ts'), 'utf8')

/** The section of a Markdown text (README by default) under a heading (`## Errors`, `### bodykit.json(...)`), up to the next heading of its level or above. */
function section (heading: string, text = readme): string {
  const lines = text.split('\n')
  const start = lines.findIndex((line) => line.startsWith(heading))
  assert.notEqual(start, -1, 'no heading starting with ' + JSON.stringify(heading))
  const level = heading.indexOf(' ')
  let end = start + 1
  while (end < lines.length) {
    const hashes = /^(#+) /.exec(lines[end])
    if (hashes !== null && hashes[1].length <= level) break
    end++
  }
  return lines.slice(start + 1, end).join('\n')
}

/** The backticked words in the first column of the first Markdown table of a text, in order. */
function firstColumn (text: string): string[] {
  const lines = text.split('\n')
  const first = lines.findIndex((line) => line.startsWith('|'))
  assert.ok(first !== -1 && lines[first + 1]?.startsWith('|---'), 'no table found')
  // Skip the header row and the `|---|` separator; the table ends at the first non-table line.
  const values: string[] = []
  for (let i = first + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cell = lines[i].split('|')[1].trim()
    const match = /^`([^`]+)`$/.exec(cell)
    assert.ok(match, 'first cell is not one backticked name: ' + JSON.stringify(cell))
    values.push(match[1])
  }
  return values
}

/** The string literals of the public `BodyParserErrorType` union in src/types.ts. */
function errorTypesInCode (): string[] {
  const declaration = /export type BodyParserErrorType =([^]*?)\n\n/.exec(typesSource)
  assert.ok(declaration, 'src/types.ts has no BodyParserErrorType union')
  return [...declaration[1].matchAll(/\|\s*'([^']+)'/g)].map((match) => match[1])
}

/** Each exported interface of src/options.ts with the names of its own properties. */
function optionInterfaces (): Map<string, string[]> {
  const interfaces = new Map<string, string[]>()
  for (const match of optionsSource.matchAll(/^export interface (\w+)[^{]*\{\n([^]*?)^\}/gm)) {
    const properties = [...match[2].matchAll(/^ {2}(?:readonly )?(\w+)\??:/gm)].map((property) => property[1])
    interfaces.set(match[1], properties)
  }
  return interfaces
}

// Where each public options interface is documented; an interface missing here fails the test below.
const SECTION_OF: Record<string, string> = {
  BaseOptions: '### Common options',
  JsonOptions: '### bodykit.json(',
  TextOptions: '### bodykit.text(',
  LegacyUrlencodedOptions: '### bodykit.urlencoded(',
  UrlencodedOptions: '### bodykit.urlencoded(',
  ReadOptions: '### Promise API',
  MultipartOptions: '### bodykit.multipart(',
  FilesOptions: '### bodykit.multipart(',
  // The type of the common option `schema` (its one property, `~standard`, is the schema library's).
  StandardSchemaV1: '### Common options'
}
// Internal shapes, not options a caller passes.
const INTERNAL = new Set(['CommonSettings', 'DiscardBudget'])

describe('README', () => {
  it('lists exactly the error types of BodyParserErrorType in its errors table', () => {
    const inCode = errorTypesInCode()
    assert.ok(inCode.length >= 11, 'parsed too few error types from src/types.ts: ' + inCode.join(', '))
    const inReadme = firstColumn(section('## Errors'))
    assert.equal(new Set(inReadme).size, inReadme.length, 'the errors table repeats a type')
    assert.deepEqual([...inReadme].sort(), [...inCode].sort())
  })

  it('documents zlib errors, which carry no type', () => {
    assert.match(section('## Errors'), /zlib/)
  })

  it('documents every option of every options interface in its section', () => {
    const interfaces = optionInterfaces()
    assert.ok(interfaces.has('BaseOptions') && interfaces.has('JsonOptions'), 'parsed no option interfaces from src/options.ts')
    for (const [name, properties] of interfaces) {
      if (INTERNAL.has(name)) continue
      const heading = SECTION_OF[name]
      assert.ok(heading, 'options interface ' + name + ' has no README section in SECTION_OF')
      const documented = firstColumn(section(heading))
      for (const property of properties) {
        assert.ok(documented.includes(property), name + '.' + property + ' is not in the table under ' + heading)
      }
    }
  })

  it('shows in docs/typescript.md the error handler that the compile matrix compiles (test/types/consumer)', () => {
    const example = /```ts\n([^]*?)```/.exec(section('## Telling bodykit\'s errors apart', docs('typescript.md')))
    assert.ok(example, 'no ts example under "Telling bodykit\'s errors apart"')
    const fixture = readFileSync(path.join(root, 'test', 'types', 'consumer', 'readme.bodykit.mts'), 'utf8')
    assert.ok(fixture.includes(example[1]), 'the example differs from test/types/consumer/readme.bodykit.mts')
  })

  it('has a section for each factory, the promise API, errors, TypeScript and the docs', () => {
    for (const heading of ['### Common options', '### bodykit.json(', '### bodykit.raw(', '### bodykit.text(', '### bodykit.urlencoded(', '### Promise API', '## Errors', '## TypeScript', '## Documentation']) {
      section(heading)
    }
  })

  it('moved the depth to docs/, one page per topic', () => {
    section('## The two entries', docs('differences.md'))
    section('### Hardening (both entries)', docs('differences.md'))
    section('## Webhook signatures with `rawBody`', docs('recipes.md'))
    section('## The promise API outside Express', docs('recipes.md'))
    section('## Prototype-poisoning guard', docs('security.md'))
    section('## Express 4 to Express 5', docs('migrating.md'))
    section('## Time per request', docs('performance.md'))
  })

  it('stays short: at most about 400 lines (five parsers), and links every page of docs/ from its table of contents', () => {
    const lines = readme.split('\n').length
    assert.ok(lines <= 400, 'README.md has ' + lines + ' lines')
    const contents = section('## Documentation')
    for (const page of readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md'))) {
      assert.ok(contents.includes('](docs/' + page + ')'), 'docs/' + page + ' is not in README\'s table of contents')
    }
  })

  it('keeps the two commands for working on bodykit, and says what the playground is', () => {
    const working = section('## Working on bodykit')
    assert.ok(working.includes('npm install && npm test'))
    assert.ok(working.includes('npm install && npm start'))
    assert.match(working, /playground/)
  })
})
