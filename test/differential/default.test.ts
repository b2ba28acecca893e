// Differential suite: bodykit default entry (src/index) vs body-parser 2.4.0.
import { describe } from 'node:test'
import { corpusFor } from './corpus'
import { defineDifferentialSuite, describeTargets } from './harness'

describe(`differential default: ${describeTargets('default')}`, () => {
  defineDifferentialSuite('default', corpusFor('default'))
})
