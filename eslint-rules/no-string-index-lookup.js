// Local lint rule `switchyard/no-string-index-lookup` (issue 14). Flags `record[key]` and
// `key in record` where `record` is an object with a string index signature (a
// Record<string, T>, a zod-parsed z.record, JSON) and `key` is any string rather than known
// literals: a plain object also answers for `constructor`, `toString`, `__proto__`... that it
// inherits from Object.prototype, so such a lookup by a caller's string finds what nobody
// configured. Use a Map, `ownValue()` from src/own.ts, or a null-prototype object; where the key
// can only be one of ours, say so with an eslint-disable comment naming why.
import ts from 'typescript';

/** A string type that is not a literal (or union of literals): any string may arrive. */
function isBroadString(type) {
  if (type.isUnion()) return type.types.some(isBroadString);
  return (type.flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping)) !== 0;
}

/** An object type indexed by arbitrary strings (not an array, not a Map). */
function hasStringIndex(checker, type) {
  const types = type.isUnion() ? type.types : [type];
  return types.some((t) => !checker.isArrayLikeType(t) && checker.getIndexInfoOfType(t, ts.IndexKind.String) !== undefined && !isNullPrototype(t));
}

/** Types declared as created by Object.create(null) can be named `NullProto...`: exempt. */
function isNullPrototype(type) {
  const name = type.aliasSymbol?.getName() ?? type.getSymbol()?.getName() ?? '';
  return name.startsWith('NullPrototype');
}

export const noStringIndexLookup = {
  meta: {
    type: 'problem',
    messages: {
      lookup: 'Lookup of a string-indexed object by an arbitrary string: Object.prototype names (constructor, __proto__...) match too. Use a Map, ownValue() (src/own.ts) or a null-prototype object.',
    },
    schema: [],
  },
  create(context) {
    // typescript-eslint's parser services (the config's `projectService`): the program and node maps.
    const services = context.sourceCode.parserServices;
    if (!services?.program) throw new Error('switchyard/no-string-index-lookup needs type information (parserOptions.projectService)');
    const checker = services.program.getTypeChecker();
    const typeAt = (node) => checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
    const objectType = (node) => checker.getApparentType(checker.getNonNullableType(typeAt(node)));
    return {
      MemberExpression(node) {
        if (!node.computed || node.property.type === 'Literal') return;
        if (isBroadString(typeAt(node.property)) && hasStringIndex(checker, objectType(node.object))) context.report({ node, messageId: 'lookup' });
      },
      BinaryExpression(node) {
        if (node.operator !== 'in' || node.left.type === 'Literal' || node.left.type === 'PrivateIdentifier') return;
        if (isBroadString(typeAt(node.left)) && hasStringIndex(checker, objectType(node.right))) context.report({ node, messageId: 'lookup' });
      },
    };
  },
};

export default { rules: { 'no-string-index-lookup': noStringIndexLookup } };
