/** A repository state: a commit plus zero or more unified diffs applied on top, in order. */
export interface RepoState {
  rev: string;
  patches: string[];
  /**
   * Optional names of the patches, in the same order, for error messages
   * (e.g. `['code patch', 'test patch']` gives "test patch does not apply: …").
   */
  patchNames?: string[];
}

/** `state` with one more patch on top, named for error messages. */
export function plusPatch(state: RepoState, patch: string, name: string): RepoState {
  return { rev: state.rev, patches: [...state.patches, patch], patchNames: [...(state.patchNames ?? []), name] };
}
