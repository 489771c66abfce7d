// Package vector ranks memories: sentence embedders, an in-memory chromem-go
// collection, a keyword index, and the fusion of the two rankings.
//
// vector imports no other package of this module; the memory package feeds
// it documents and asks it for ranked ids.
package vector
