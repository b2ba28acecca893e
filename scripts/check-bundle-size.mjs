// CI guard on what each public entry costs an app that bundles it: esbuild's minified bundle of dist/ against bundle-budget.json.
// Usage (after npm run build): node scripts/check-bundle-size.mjs; exits 1 when an entry is over its budget or has none.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { bundleEntry } from './bundle-size.mjs'
import { bundleWeb } from './web-bundle.mjs'

const root = path.join(import.meta.dirname, '..')
const KIB = 1024
const BUDGET_FILE = 'bundle-budget.json'

/** The file `require()` of a conditional export reaches (the `default` branches), or the string export itself. */
function requireTarget (target) {
  return typeof target === 'string' ? target : requireTarget(target.default)
}

/** Each public entry of package.json `exports` and the file it names; ./package.json is data, not code. */
function publicEntries () {
  const { exports } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  return Object.entries(exports).filter(([entry]) => entry !== './package.json').map(([entry, target]) => ({ entry, file: path.join(root, requireTarget(target)) }))
}

/** A browser bundle of an entry's `browser` export (an ES module, with what it imports of the package), and the Node built-ins it still imports. */
async function bundleBrowserEntry (entry) {
  const { exports } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  const target = exports[entry].browser.default
  const size = await bundleWeb(target)
  return { ...size, inputs: { [path.basename(target)]: size.minified } }
}

function formatTable (rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  const line = (row) => row.map((cell, i) => i === 0 || i === row.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])).join('  ').trimEnd()
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n')
}

async function main () {
  const budgets = JSON.parse(readFileSync(path.join(root, BUDGET_FILE), 'utf8'))
  const entries = publicEntries()
  const missing = entries.filter(({ file }) => !existsSync(file))
  if (missing.length > 0) {
    console.error(`check-bundle-size: ${missing.map(({ file }) => path.relative(root, file)).join(', ')} missing: run npm run build first`)
    process.exitCode = 1
    return
  }
  const problems = []
  const rows = [['entry', 'minified KiB', 'gzip KiB', 'budget KiB', 'top 5 inputs (minified KiB)']]
  for (const { entry, file } of entries) {
    // An entry for browsers and edge runtimes (bodykit/web) is measured as they bundle it: its ES module, for a browser platform.
    // An entry with a `browser` export has a budget for it too (`browser`): bundled as browsers and edge runtimes bundle it.
    const measured = [{ name: entry, budget: budgets[entry], size: await bundleEntry(file) }]
    if (budgets[entry]?.browser) measured.push({ name: entry + ' (browser)', budget: budgets[entry].browser, size: await bundleBrowserEntry(entry) })
    for (const { name, budget: { minifiedKiB: budget, gzipKiB: gzipBudget } = {}, size } of measured) {
      const minifiedKiB = size.minified / KIB
      if (typeof budget !== 'number') problems.push(`${name} has no budget in ${BUDGET_FILE}: add { "minifiedKiB": N, "why": "..." }`)
      else if (minifiedKiB > budget) problems.push(`${name} is ${minifiedKiB.toFixed(1)} KiB minified, over its budget of ${budget} KiB`)
      if (typeof gzipBudget === 'number' && size.gzip / KIB > gzipBudget) problems.push(`${name} is ${(size.gzip / KIB).toFixed(1)} KiB gzip, over its budget of ${gzipBudget} KiB`)
      if (size.builtins?.length > 0) problems.push(`${name} imports Node built-ins in a browser bundle: ${size.builtins.join(', ')}`)
      const top = Object.entries(size.inputs).slice(0, 5).map(([input, bytes]) => `${input} ${(bytes / KIB).toFixed(1)}`).join(', ')
      rows.push([name, minifiedKiB.toFixed(1), (size.gzip / KIB).toFixed(1), typeof budget === 'number' ? String(budget) : '-', top])
    }
  }
  console.log(formatTable(rows))
  // A budget for an entry that is gone is harmless but misleading: say so without failing.
  for (const entry of Object.keys(budgets)) {
    if (!entries.some((e) => e.entry === entry)) console.log(`note: ${BUDGET_FILE} has a budget for ${entry}, which package.json does not export`)
  }
  if (problems.length > 0) {
    console.error('\ncheck-bundle-size:\n- ' + problems.join('\n- '))
    process.exitCode = 1
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
