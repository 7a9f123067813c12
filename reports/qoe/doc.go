// Package qoe scores how a token stream feels to the person watching it,
// against the delivery they expect: the first token after an expected TTFT,
// then tokens at the pace they read (or listen) at.
//
//   - Andes (Liu et al., "Andes: Defining and Enhancing Quality-of-Experience
//     in LLM-Based Text Streaming Services", arXiv:2404.16283): QoE is
//     1 − S_delay/S_expected, the area by which the delivered-tokens curve
//     lags the expected curve over the area under the expected curve. Tokens
//     that arrive early wait to be read, so being ahead never earns credit.
//   - Etalon (Agrawal et al., "Etalon: Holistic Performance Evaluation
//     Framework for LLM Inference Systems", arXiv:2407.07000): the fluidity
//     index gives every token a deadline (the expected TTFT for the first,
//     then one period 1/speed after the previous deadline), carries the
//     slack of early tokens forward, counts every deadline a late token
//     misses and restarts the deadlines from it; the score is the share of
//     deadlines met. The fluid token rate is the highest speed at which the
//     stream still meets 99 % of its deadlines.
//
// Start with Score; Sink scores a simulation's timelines as they finish.
package qoe
