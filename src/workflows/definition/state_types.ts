import type { Block, State, StateType } from "./schema.ts";

/** The nested blocks of a state: parallel branches, a foreach iterator, try/catch/finally. */
function childBlocks(state: State): Block[] {
  switch (state.type) {
    case "parallel":
      return state.branches;
    case "foreach":
      return [state.iterator];
    case "try":
      return [state.try, ...(state.catch ? [state.catch] : []), ...(state.finally ? [state.finally] : [])];
    default:
      return [];
  }
}

/** Every state type a workflow uses, nested blocks included (e.g. to see whether it needs sandboxes). */
export function stateTypes(block: Block): Set<StateType> {
  const types = new Set<StateType>();
  const visit = (b: Block) => {
    for (const state of b.states) {
      types.add(state.type);
      childBlocks(state).forEach(visit);
    }
  };
  visit(block);
  return types;
}
