package grammar

type walker struct{}
type mask struct{}
type Vocab struct{}
