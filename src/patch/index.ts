/** Model patch handling: the custom diff format, tolerant unified diffs, path safety. */
export { applyModelPatch, applyModelPatchToFiles, detectFormat } from './applyModelPatch.js';
export type { ApplyModelPatchOptions, DetailedPatchApplication, FileReader, PatchFormat } from './applyModelPatch.js';
export { parseCustomDiff, looksLikeCustom, parseLocation } from './customFormat.js';
export type { BlockLocation, BlockMode, CustomBlock, CustomParse } from './customFormat.js';
export { applyCustomBlocks } from './customApply.js';
export type { CustomApplyResult, FileChange, ReadFile } from './customApply.js';
export { applyUnifiedToText } from './unified.js';
export { parseUnifiedDiff, looksLikeUnified } from './unifiedParse.js';
export type { FileApplyResult, HunkReport, HunkStatus } from './unified.js';
export type { UnifiedFilePatch, UnifiedHunk, UnifiedParse } from './unifiedParse.js';
export { canonicalDiff, fileDiff } from './canonical.js';
export type { CanonicalChange } from './canonical.js';
export { checkNoSymlink, checkPatchSize, checkFileCount, DEFAULT_PATCH_LIMITS } from './safety.js';
export type { PatchLimits } from './safety.js';
export { analyze, languageForPath, loadLanguage, loadAllLanguages } from './structure.js';
export type { Lang, Structure, Unit, UnitKind, Container } from './structure.js';
export { fencedBlocks, namedPath, parseWholeFiles } from './wholeFiles.js';
export type { FencedBlock, WholeFile } from './wholeFiles.js';
