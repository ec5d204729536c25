module github.com/mtibben/confusables

go 1.21

require golang.org/x/text v0.14.0
