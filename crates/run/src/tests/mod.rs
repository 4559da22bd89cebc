//! Tests of the pipeline's parts that need no process (spec building,
//! timeline rows, result file selection, rotation names, the result
//! writer's retries): unit tests, since those parts are crate-private.

mod pipeline;
mod runner_parts;
