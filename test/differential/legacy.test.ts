// Differential suite: bodykit legacy entry (src/legacy) vs body-parser 1.20.6.
import { describe } from 'node:test'
import { corpusFor } from './corpus'
import { defineDifferentialSuite, describeTargets } from './harness'

describe(`differential legacy: ${describeTargets('legacy')}`, () => {
  defineDifferentialSuite('legacy', corpusFor('legacy'))
})
