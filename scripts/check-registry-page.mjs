// Release guard: the registry's page for the package must lead somewhere. npm resolves README's relative links
// against `repository` (a GitHub, GitLab or Bitbucket URL), and shows `homepage` and `bugs` as its links; without
// them every link to docs/ on the page is dead. Usage: node scripts/check-registry-page.mjs [package folder]
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

const folder = path.resolve(process.argv[2] ?? '.')
const pkg = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'))
const urlOf = (field) => typeof field === 'string' ? field : field?.url
const problems = []

const repository = urlOf(pkg.repository)
if (typeof repository !== 'string' || !/^(git\+)?https:\/\/(github\.com|gitlab\.com|bitbucket\.org)\//.test(repository)) {
  problems.push('package.json: "repository" must be the https URL of a GitHub, GitLab or Bitbucket repository (npm resolves README links against it)')
}
if (typeof pkg.homepage !== 'string' || !pkg.homepage.startsWith('https://')) problems.push('package.json: "homepage" must be an https URL')
if (typeof urlOf(pkg.bugs) !== 'string' || !urlOf(pkg.bugs).startsWith('https://')) problems.push('package.json: "bugs" must give the https URL where issues are reported')

// Each relative link of README must name a file of the repository, where the registry will send the reader.
const readme = readFileSync(path.join(folder, 'README.md'), 'utf8')
for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
  if (/^(https?:|mailto:|#)/.test(target)) continue
  const file = target.split('#')[0]
  if (!existsSync(path.join(folder, file))) problems.push(`README.md: the link ${target} names no file of the repository`)
}

if (problems.length > 0) {
  console.error('The registry page would have dead links:\n- ' + problems.join('\n- '))
  process.exit(1)
}
console.log('registry page: repository, homepage, bugs and every README link resolve')
