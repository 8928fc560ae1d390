import { describe, expect, it } from 'vitest'
import { sqlIndentationLeftOut } from '../../scripts/worker-bundle/sql-indentation.js'

describe('the worker bundle: sql`…` templates without their indentation', () => {
  it('unindents the lines of sql templates, nested ones too, and leaves every other template and the expressions as they are', () => {
    const source = [
      'const a = sql`select 1',
      '    from t -- a comment',
      '    where x = ${f(\'}\', "`")} and ${sql`y',
      '      = 1`}`',
      'const html = `<p>',
      '    kept</p>`',
    ].join('\n')
    const expected = [
      'const a = sql`select 1',
      'from t -- a comment',
      'where x = ${f(\'}\', "`")} and ${sql`y',
      '= 1`}`',
      'const html = `<p>',
      '    kept</p>`',
    ].join('\n')
    expect(sqlIndentationLeftOut(source)).toBe(expected)
  })
})
