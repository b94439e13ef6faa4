// A TypeDoc plugin (typedoc.config.mjs loads it): an entry file says which category its exports
// belong to with a `@category` tag on the export statement (`/** @category Tools */` above
// `export { defineTool } from …`), and each name that statement exports joins that category in
// the API reference. A `@category` in the module's own comment (the one with `@module`) is the
// category of the names no statement gives one (those the file declares itself); the module
// itself stays uncategorised. TypeDoc itself reads a category only from a declaration's own
// comment, and the entry files are where the public names are chosen.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Comment, CommentTag, Converter } from 'typedoc';
import ts from 'typescript';

/** Module name (its `@module` tag) → its names' categories (and the default, under ''), read from the entry files. */
function categoriesOf(entryPoints) {
  const modules = new Map();
  for (const entry of entryPoints) {
    const file = ts.createSourceFile(entry, readFileSync(resolve(entry), 'utf8'), ts.ScriptTarget.Latest, true);
    const moduleName = /@module\s+(\S+)/.exec(file.text)?.[1];
    if (moduleName === undefined) continue;
    const names = new Map();
    const moduleComment = /\/\*\*(?:(?!\*\/)[\s\S])*@module(?:(?!\*\/)[\s\S])*\*\//.exec(file.text)?.[0] ?? '';
    const fallback = /@category\s+(\S+)/.exec(moduleComment)?.[1];
    if (fallback !== undefined) names.set('', fallback);
    for (const statement of file.statements) {
      if (!ts.isExportDeclaration(statement) || statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause)) continue;
      const tag = ts.getJSDocTags(statement).find((t) => t.tagName.text === 'category');
      const category = typeof tag?.comment === 'string' ? tag.comment.trim() : undefined;
      if (category) for (const specifier of statement.exportClause.elements) names.set(specifier.name.text, category);
    }
    modules.set(moduleName, names);
  }
  return modules;
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const modules = categoriesOf(app.options.getValue('entryPoints'));
    for (const module of context.project.children ?? []) {
      const names = modules.get(module.name);
      if (module.comment !== undefined) module.comment.blockTags = module.comment.blockTags.filter((t) => t.tag !== '@category');
      for (const child of module.children ?? []) {
        const category = names?.get(child.name) ?? names?.get('');
        if (category === undefined || child.comment?.blockTags.some((t) => t.tag === '@category')) continue;
        child.comment ??= new Comment();
        child.comment.blockTags.push(new CommentTag('@category', [{ kind: 'text', text: category }]));
      }
    }
  });
}
